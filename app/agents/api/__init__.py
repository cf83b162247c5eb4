"""The MCP server: ``server`` assembles it from the tools of ``reading``, ``tuning`` and
``judging``, which share ``tooling``."""

from app.agents.api.server import McpEndpoint, build_server, http_server, mount
from app.agents.api.tooling import Runtime

__all__ = ["McpEndpoint", "Runtime", "build_server", "http_server", "mount"]

"""The tools as an MCP client lists them, through the SDK's own client connected in process:
their names, arguments (required and optional), read-only annotations and descriptions."""

from __future__ import annotations

import asyncio
from typing import Any, NoReturn

from mcp import Client
from mcp_types import Tool

from app.agents.api import Runtime, build_server

# name: (required arguments in order, optional arguments)
ARGUMENTS: dict[str, tuple[list[str], set[str]]] = {
    "list_cases": ([], set()),
    "get_case": (["case_id"], set()),
    "list_runs": (["case_id"], {"limit"}),
    "get_run": (["case_id", "run_id"], set()),
    "start_run": (["case_id"], {"wait_s"}),
    "compare_runs": (["case_id", "base_run_id", "other_run_id"], set()),
    "get_query_results": (["case_id", "query_id"], {"run_id"}),
    "search_documents": (["case_id", "query_text"], {"rows", "query_template"}),
    "rate": (["case_id", "query_id", "ratings"], set()),
    "propose_try": (["case_id"], {"query_template", "knobs", "wait_s"}),
    "apply_try": (["case_id", "run_id"], {"confirm_partial"}),
    "start_sweep": (["case_id", "knobs"], set()),
    "judge_estimate": (["book_id", "judge_id"], {"pairs", "limit"}),
    "start_judge_run": (
        ["book_id", "judge_id"],
        {"budget_usd", "budget_tokens", "pairs", "limit"},
    ),
    "annotate": (["case_id", "text"], {"run_id"}),
}
READ_ONLY = {
    "list_cases": "List cases",
    "get_case": "Get a case",
    "list_runs": "List runs",
    "get_run": "Get a run",
    "compare_runs": "Compare two runs",
    "get_query_results": "Get a query's results",
    "search_documents": "Search documents",
    "judge_estimate": "Estimate a judge run",
}


def _unused(*_args: Any) -> NoReturn:
    raise AssertionError("listing tools touches neither the database nor the runs")


def _listed() -> list[Tool]:
    server = build_server(Runtime(session_factory=_unused, run_manager=_unused, key_of=_unused))

    async def listing() -> list[Tool]:
        async with Client(server) as client:
            return (await client.list_tools()).tools

    return asyncio.run(listing())


def test_the_tools_and_their_arguments_are_pinned() -> None:
    tools = _listed()
    assert [t.name for t in tools] == list(ARGUMENTS)
    for tool in tools:
        required, optional = ARGUMENTS[tool.name]
        schema = tool.input_schema
        assert schema.get("required", []) == required, tool.name
        # The context and the runtime are the server's own, never arguments.
        assert set(schema["properties"]) == set(required) | optional, tool.name


def test_read_only_tools_say_so_and_the_others_do_not() -> None:
    tools = {t.name: t for t in _listed()}
    read_only = {
        name: t.annotations.title
        for name, t in tools.items()
        if t.annotations is not None and t.annotations.read_only_hint
    }
    assert read_only == READ_ONLY
    assert all(tools[name].annotations is None for name in set(tools) - set(READ_ONLY))


def test_descriptions_are_the_docstrings_without_their_indentation() -> None:
    tools = {t.name: t for t in _listed()}
    assert tools["get_case"].description == (
        "A case's settings (current try), its latest run's scores per metric and tag, its\n"
        "rating coverage, its queries and which of them are held out."
    )
    for tool in tools.values():
        assert tool.description and tool.description == tool.description.strip(), tool.name
        assert "\n " not in tool.description, tool.name


def test_schemas_keep_their_bounds() -> None:
    tools = {t.name: t for t in _listed()}
    case_id = tools["get_case"].input_schema["properties"]["case_id"]
    assert (case_id["minimum"], case_id["maximum"]) == (1, 2**31 - 1)
    wait_s = tools["propose_try"].input_schema["properties"]["wait_s"]
    assert (wait_s["default"], wait_s["maximum"]) == (120.0, 600.0)
    budget = tools["start_judge_run"].input_schema["properties"]["budget_usd"]["anyOf"][0]
    assert budget == {"exclusiveMinimum": 0, "maximum": 1_000_000, "type": "number"}

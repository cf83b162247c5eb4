"""The checks a pull's request passes before the pull is recorded.

A pull reads an OpenSearch or Elasticsearch endpoint the caller may use, over a window
that ends after it starts, at a destination the outbound policy allows. A request that
fails them answers 422 (``Invalid``) or 502 (``PullFailed``) and records nothing.
"""

from __future__ import annotations

import asyncio

from app.clicks.pull_paging import PullFailed, engine_base, failure
from app.clicks.schemas import PullBody
from app.endpoints.service import engine_config
from app.errors import Invalid, RelevoError
from app.models import SearchEndpoint
from app.outbound.policy import check_destination, current_policy
from app.search.engines import ADAPTERS
from app.search.types import EndpointConfig

__all__ = ["PULL_ENGINES", "check_request"]

PULL_ENGINES = tuple(engine for engine, adapter in ADAPTERS.items() if adapter.holds_ubi_logs)


def check_request(*, endpoint: SearchEndpoint, body: PullBody) -> EndpointConfig:
    """Return the endpoint's engine settings if a pull may read it; raise Invalid or PullFailed.

    It resolves the engine's host: call it from a worker thread, not in an event loop.
    """
    if endpoint.engine not in PULL_ENGINES:
        raise Invalid(
            "search_endpoint_id",
            f"a pull reads OpenSearch or Elasticsearch indexes; this endpoint is {endpoint.engine}",
        )
    if body.since is not None and body.until is not None and body.until <= body.since:
        raise Invalid("until", "until must be after since")
    config = engine_config(endpoint)
    if config.secrets_error:
        raise PullFailed(config.secrets_error)
    _check_destination(config)
    return config


def _check_destination(config: EndpointConfig) -> None:
    try:
        asyncio.run(check_destination(current_policy(), engine_base(config.url), config.safe_url))
    except RelevoError as exc:
        raise PullFailed(exc.message) from exc
    except Exception as exc:  # the policy's refusals (Unreachable) and the like
        raise failure(exc, config.safe_url) from exc

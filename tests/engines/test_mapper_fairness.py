"""Search API mappers run in the JavaScript sandbox as their user's work, as scorers do.

The sandbox lets one user hold at most all workers but one, so another user's mapper never
waits behind the first's loops. The pool counts the acquisitions that had to wait, per owner.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from app.sandbox import JsPool, PoolSettings, install_pool
from app.sandbox.mapper import run_mapper
from tests.engines.fake_services import Service, running_service
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case
from tests.support.mappers import QUEPID_MAPPER

LOOP = "docsMapper = function(d) { while (true) {} }"


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service() as running:
        yield running


@pytest.fixture
def pool() -> Iterator[JsPool]:
    """A pool of two workers: one user may hold one of them."""
    with JsPool(PoolSettings(workers=2)) as own:
        previous = install_pool(own)
        try:
            yield own
        finally:
            install_pool(previous)


def _endpoint(api: ApiUser, url: str, code: str) -> int:
    body = {"name": "e", "engine": "searchapi", "url": url, "mapper_code": code}
    response = api.post("/api/v1/search-endpoints", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _try(api: ApiUser, endpoint_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/search-endpoints/{endpoint_id}/try", json={"query_text": "x"})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_one_users_looping_mapper_leaves_anothers_try_a_worker(
    api: ApiUser, other_api: ApiUser, service: Service, pool: JsPool
) -> None:
    looping = _endpoint(api, service.url + "/api", LOOP)
    quick = _endpoint(other_api, service.url + "/api", QUEPID_MAPPER)
    with ThreadPoolExecutor(1) as background:
        first = background.submit(_try, api, looping)
        # The looping mapper holds a worker as the first user's work...
        with pool.lock:
            while pool.held.get(api.id) != 1 and not first.done():
                pool.lock.wait(0.05)
            held = dict(pool.held)
        # ...while the second user's try takes the other one.
        second = _try(other_api, quick)
        looped = first.result()
    assert held == {api.id: 1}
    assert second["error"] is None
    assert [d["id"] for d in second["docs"]] == ["101", "102", "103"]
    assert "time limit" in (looped["error"] or "")
    # The second user's mapper never waited for a worker; nobody's did as no one's.
    assert pool.waited.get(other_api.id, 0) == 0
    assert None not in pool.waited and None not in pool.held


@pytest.mark.runner
def test_a_runs_mappers_are_the_case_owners_work(
    api: ApiUser, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    owners: list[object] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        owners.append(kwargs.get("owner"))
        return run_mapper(*args, **kwargs)

    monkeypatch.setattr("app.search.searchapi.run_mapper", counted)
    endpoint_id = _endpoint(api, service.url + "/api", QUEPID_MAPPER)
    case = make_case(api, endpoint_id, query_template="q=#$query##", field_spec="id:id title")
    add_queries(api, int(case["id"]), ["one", "two"])
    run = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
    assert run["status"] == "finished", run
    assert owners == [api.id, api.id]

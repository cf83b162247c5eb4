"""Runs on the PostgreSQL job queue, executed by real `relevo worker` processes.

Every test here has a database of its own and starts workers as separate processes, the
way a deployment does; killing one with SIGKILL is the crash being tested.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_session_factory, session_scope
from app.models import Case
from app.runs import service as run_service
from app.runs import store as run_store
from app.runs.manager import RunManager
from app.runs.queue import RunQueue
from tests.fixtures.users import ApiUser, make_api_user
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.queue import ROOT as ROOT
from tests.support.queue import STALLED_S as STALLED_S
from tests.support.queue import Workers as Workers
from tests.support.queue import _server as _server
from tests.support.queue import _settings as _settings
from tests.support.queue import queue_db as queue_db
from tests.support.queue import workers as workers
from tests.support.slow_engine import SlowEngine, ranking_for, slow_engine

pytestmark = pytest.mark.runner


def _until(check: Callable[[], bool], timeout_s: float = 90, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _manager(client: TestClient) -> RunManager:
    assert isinstance(client.app, FastAPI)
    manager: RunManager = client.app.state.run_manager
    return manager


def _case(
    api: ApiUser, engine: SlowEngine, queries: int, **endpoint: Any
) -> tuple[int, dict[str, int]]:
    made = make_endpoint(api, engine.index_url, timeout_s=30, **endpoint)
    case_id = int(make_case(api, made["id"], scorer_id=scorer_id(api, "NDCG@10"))["id"])
    ids = add_queries(api, case_id, [f"query {n}" for n in range(queries)])
    return case_id, ids


def _rate_some(api: ApiUser, case_id: int, ids: dict[str, int]) -> None:
    # Grades on a few docs of every query, different per query, so scores differ.
    for n, query_id in enumerate(ids.values()):
        ratings = [{"doc_id": str(doc), "rating": (doc + n) % 4} for doc in range(n % 5, 40, 6)]
        response = api.put(
            f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json={"ratings": ratings}
        )
        assert response.status_code == 200, response.text


def _run(api: ApiUser, case_id: int, run_id: int) -> dict[str, Any]:
    response = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _jobs_left(db_url: str) -> int:
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    text(
                        "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
                    )
                ).scalar_one()
            )
    finally:
        engine.dispose()


def test_a_killed_worker_loses_nothing(queue_db: str, workers: Workers, tmp_path: Path) -> None:
    with slow_engine(delay_s=0.05) as engine, _server(queue_db, tmp_path) as client:
        api = make_api_user(client, make_session_factory(create_engine(queue_db)), "a@example.com")
        case_id, ids = _case(api, engine, queries=60, max_concurrency=4)
        _rate_some(api, case_id, ids)
        runs = [api.post(f"/api/v1/cases/{case_id}/runs").json()["id"] for _ in range(3)]
        assert all(_run(api, case_id, r)["status"] == "queued" for r in runs)  # no worker yet

        first = workers.start(concurrency=2)
        # Kill it once some chunks are committed and before the runs are done.
        _until(
            lambda: sum(_run(api, case_id, r)["progress"]["done"] for r in runs) >= 20,
            what="a few committed chunks",
        )
        first.send_signal(signal.SIGKILL)
        first.wait()
        before = [_run(api, case_id, r) for r in runs]
        assert not all(r["status"] == "finished" for r in before)

        workers.start(concurrency=4)
        _until(
            lambda: all(_run(api, case_id, r)["status"] == "finished" for r in runs),
            what="every run to finish after the kill",
        )
        finished = [_run(api, case_id, r) for r in runs]

        # The same case run in-process (no queue) is the reference for every score.
        with _server(queue_db, tmp_path, run_queue="inprocess") as reference_client:
            reference_api = ApiUser(api.id, api.email, api.key, reference_client)
            reference = reference_api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()

    assert reference["status"] == "finished"
    expected = {q["query_id"]: q["score"] for q in reference["queries"]}
    assert len(expected) == 60 and any(s not in (None, 0) for s in expected.values())
    for run in finished:
        assert run["progress"] == {"done": 60, "total": 60}
        query_ids = [q["query_id"] for q in run["queries"]]
        assert sorted(query_ids) == sorted(ids.values())  # exactly one result per query
        assert {q["query_id"]: q["score"] for q in run["queries"]} == expected
        assert run["case_score"] == pytest.approx(reference["case_score"], abs=1e-9)
        assert run["recorded_score"] == pytest.approx(reference["recorded_score"], abs=1e-9)
        assert run["recorded_score"] == pytest.approx(run["case_score"], abs=1e-9)
        assert run["scored"] == reference["scored"] and run["errors"] == 0
    assert _jobs_left(queue_db) == 0


def test_cancel_drops_queued_chunks_and_stops_running_ones(
    queue_db: str, workers: Workers, tmp_path: Path
) -> None:
    with slow_engine(delay_s=0.1) as engine, _server(queue_db, tmp_path) as client:
        api = make_api_user(client, make_session_factory(create_engine(queue_db)), "c@example.com")
        case_id, _ids = _case(api, engine, queries=80, max_concurrency=2)
        run_id = api.post(f"/api/v1/cases/{case_id}/runs").json()["id"]
        workers.start(concurrency=2)
        _until(lambda: _run(api, case_id, run_id)["status"] == "running", what="the run to start")
        cancelled = api.post(f"/api/v1/cases/{case_id}/runs/{run_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        asked = engine.answered
        _until(lambda: _jobs_left(queue_db) == 0, timeout_s=30, what="the run's jobs to go")
        _until(lambda: engine.in_flight == 0, timeout_s=30, what="the last searches to end")
        run = _run(api, case_id, run_id)
        # Chunks under way stopped within a heartbeat: far fewer searches than queries.
        assert engine.answered < asked + 2 * 10
        assert engine.answered < 80

        # The worker goes on with the next run.
        again = api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()
    assert run["status"] == "cancelled" and run["error"] == "Cancelled."
    assert again["status"] == "finished" and again["progress"] == {"done": 80, "total": 80}


def test_endpoint_limits_hold_across_two_workers(
    queue_db: str, workers: Workers, tmp_path: Path
) -> None:
    with slow_engine(delay_s=0.03) as engine, _server(queue_db, tmp_path) as client:
        api = make_api_user(client, make_session_factory(create_engine(queue_db)), "l@example.com")
        case_id, _ids = _case(api, engine, queries=40, max_concurrency=3)
        runs = [api.post(f"/api/v1/cases/{case_id}/runs").json()["id"] for _ in range(3)]
        workers.start(concurrency=4)
        workers.start(concurrency=4)
        _until(
            lambda: all(_run(api, case_id, r)["status"] == "finished" for r in runs),
            what="the runs to finish",
        )
    assert engine.answered == 120
    assert engine.most_in_flight == 3  # eight chunks at once, never more than three searches


def test_two_servers_on_one_database_leave_each_others_runs_alone(
    queue_db: str, workers: Workers, tmp_path: Path
) -> None:
    # Short leases: each server's reaper looks every second, while the runs wait for a worker.
    with ExitStack() as stack:
        engine = stack.enter_context(slow_engine(delay_s=0.01))
        first = stack.enter_context(_server(queue_db, tmp_path / "one", run_lease_s=2))
        second = stack.enter_context(_server(queue_db, tmp_path / "two", run_lease_s=2))
        factory = make_session_factory(create_engine(queue_db))
        api_one = make_api_user(first, factory, "one@example.com")
        api_two = make_api_user(second, factory, "two@example.com")
        case_one, _ = _case(api_one, engine, queries=15)
        case_two, _ = _case(api_two, engine, queries=15)
        run_one = api_one.post(f"/api/v1/cases/{case_one}/runs").json()["id"]
        run_two = api_two.post(f"/api/v1/cases/{case_two}/runs").json()["id"]
        # Four more reaper rounds on both servers (one a second: the last ones past the runs'
        # lease), with no worker yet.
        servers = [(_manager(first), _manager(first).reaper_rounds)]
        servers.append((_manager(second), _manager(second).reaper_rounds))
        _until(
            lambda: all(manager.reaper_rounds >= rounds + 4 for manager, rounds in servers),
            timeout_s=30,
            what="reaper rounds",
        )
        assert _run(api_one, case_one, run_one)["status"] == "queued"
        assert _run(api_two, case_two, run_two)["status"] == "queued"
        workers.start(concurrency=2)
        _until(lambda: _run(api_one, case_one, run_one)["status"] == "finished", what="run one")
        _until(lambda: _run(api_two, case_two, run_two)["status"] == "finished", what="run two")
        # Each server reads the other's run's progress from the committed results.
        assert _run(api_one, case_one, run_one)["progress"] == {"done": 15, "total": 15}
        assert api_two.get(f"/api/v1/cases/{case_one}/runs/{run_one}").status_code == 404


def _run_never_queued(
    db_url: str, data_dir: Path, engine: SlowEngine, queries: int
) -> tuple[ApiUser, sessionmaker[Session], int, int]:
    """Make a case through a server that then stops, and a run of it that nobody queued."""
    factory = make_session_factory(create_engine(db_url))
    with _server(db_url, data_dir) as client:
        api = make_api_user(client, factory, f"never-queued-{queries}@example.com")
        case_id, _ids = _case(api, engine, queries=queries)
    with session_scope(factory) as session:
        case = session.get(Case, case_id)
        assert case is not None
        run_id = run_service.create_run(session=session, case=case).id
    return api, factory, case_id, run_id


@pytest.mark.parametrize("stopped_after", ["creating", "planning"])
def test_a_run_its_server_never_queued_is_queued_again_not_failed(
    queue_db: str, workers: Workers, tmp_path: Path, stopped_after: str
) -> None:
    # A server that stops between creating a run and queueing its chunks (a sweep creates all
    # its runs, then queues them), or between splitting it into chunks and deferring their
    # jobs, leaves a queued run without jobs: it is queued once more.
    with slow_engine(delay_s=0.01) as engine:
        api, factory, case_id, run_id = _run_never_queued(
            queue_db, tmp_path / "one", engine, queries=7
        )
        if stopped_after == "planning":
            with session_scope(factory) as session:
                chunks = run_store.plan_chunks(session=session, run_id=run_id, chunk_size=10)
                assert chunks and len(chunks[0]) == 7
        assert _jobs_left(queue_db) == 0
        with _server(queue_db, tmp_path / "two", run_lease_s=2) as client:
            api = ApiUser(api.id, api.email, api.key, client)
            workers.start(concurrency=2)
            _until(lambda: _run(api, case_id, run_id)["status"] != "queued", what="the run")
            _until(lambda: _run(api, case_id, run_id)["status"] == "finished", what="the run")
            assert _run(api, case_id, run_id)["progress"] == {"done": 7, "total": 7}
    assert engine.answered == 7


def test_a_stopping_server_lets_the_runs_it_is_queueing_reach_the_queue(
    queue_db: str, tmp_path: Path
) -> None:
    # Stopping cancels the tasks that watch queued runs; a run whose chunks were being put
    # in the queue at that moment gets them there, rather than being left without jobs.
    with slow_engine(delay_s=0.01) as engine:
        _api, factory, _case_id, run_id = _run_never_queued(queue_db, tmp_path, engine, queries=3)

    async def start_and_stop() -> None:
        queue = RunQueue(database_url=queue_db, session_factory=factory, chunk_size=10)
        await queue.open()
        try:
            manager = RunManager(session_factory=factory, queue=queue)
            slow_plan = queue._plan
            planning, stopping = threading.Event(), threading.Event()

            def plan_slowly(run_id: int) -> list[list[int]]:
                planning.set()
                stopping.wait(30)  # still planning when the server is told to stop
                return slow_plan(run_id)

            queue._plan = plan_slowly  # type: ignore[method-assign]
            manager.start(run_id)
            assert await asyncio.to_thread(planning.wait, 30)
            closing = asyncio.create_task(manager.aclose())
            await asyncio.sleep(0)  # the server has begun to stop
            stopping.set()
            await closing
        finally:
            await queue.close()

    asyncio.run(start_and_stop())
    assert _jobs_left(queue_db) == 1


def test_the_test_engine_ranks_a_text_the_same_way_each_time() -> None:
    assert ranking_for(b"x") == ranking_for(b"x") != ranking_for(b"y")


KNOB_TEMPLATE = (
    '{"query": {"match": {"title": {"query": "#$query##", "boost": ##b##}}}, "size": ##n##}'
)


def test_a_sweep_queues_every_combination_and_outlives_its_server(
    queue_db: str, workers: Workers, tmp_path: Path
) -> None:
    with slow_engine(delay_s=0.01) as engine:
        with _server(queue_db, tmp_path / "one") as client:
            factory = make_session_factory(create_engine(queue_db))
            api = make_api_user(client, factory, "s@example.com")
            made = make_endpoint(api, engine.index_url, timeout_s=30)
            case = make_case(api, made["id"], query_template=KNOB_TEMPLATE, knobs={"b": 1, "n": 10})
            add_queries(api, int(case["id"]), [f"query {n}" for n in range(12)])
            started = api.post(
                f"/api/v1/cases/{case['id']}/sweeps", json={"knobs": {"b": [1, 2], "n": [5, 10]}}
            )
            assert started.status_code == 202, started.text
            sweep_url = f"/api/v1/cases/{case['id']}/sweeps/{started.json()['id']}"
            _until(lambda: len(api.get(sweep_url).json()["results"]) == 4, what="4 queued runs")
            assert api.get(sweep_url).json()["status"] == "running"
        # The server that started the sweep is gone; another starts (and must not fail it,
        # even with a short lease), then workers execute the four runs at once.
        with _server(queue_db, tmp_path / "two", run_lease_s=5) as client:
            api = ApiUser(api.id, api.email, api.key, client)
            assert api.get(sweep_url).json()["status"] == "running"
            workers.start(concurrency=4)
            _until(lambda: api.get(sweep_url).json()["status"] == "finished", what="the sweep")
            sweep = api.get(sweep_url).json()
            runs = api.get(f"/api/v1/cases/{case['id']}/runs").json()
    assert sorted((r["knobs"]["b"], r["knobs"]["n"]) for r in sweep["results"]) == [
        (1, 5), (1, 10), (2, 5), (2, 10)
    ]  # fmt: skip
    swept = {x["run_id"] for x in sweep["results"]}
    assert {r["id"]: r["status"] for r in runs if r["id"] in swept} == dict.fromkeys(
        swept, "finished"
    ), runs
    assert engine.answered == 4 * 12

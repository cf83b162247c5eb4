"""Cancelling runs, bounded waits, and leases that keep other processes' runs alive."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.main import create_app
from app.models import Case, Run
from app.runs import inputs as run_inputs
from app.runs import orphans as run_orphans
from app.runs import service as run_service
from app.runs import store as run_store
from app.runs.manager import RunManager
from tests.fixtures.outbound import SUITE_HOSTS
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint
from tests.support.gate_engine import GateEngine, gate_engine
from tests.support.pages import login, one, soup

pytestmark = pytest.mark.runner


def _case(api: ApiUser, engine: GateEngine, queries: int = 3, concurrency: int = 1) -> int:
    # The endpoint's concurrency limit holds across all runs against it.
    endpoint = make_endpoint(api, engine.index_url, max_concurrency=concurrency, timeout_s=30)
    case_id = int(make_case(api, endpoint["id"])["id"])
    add_queries(api, case_id, [f"query {n}" for n in range(queries)])
    return case_id


def _until(api: ApiUser, url: str, statuses: set[str], timeout_s: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    run: dict[str, Any] = api.get(url).json()
    while run["status"] not in statuses and time.monotonic() < deadline:
        time.sleep(0.05)
        run = api.get(url).json()
    return run


def _wait_for(check: Callable[[], bool], what: str, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _manager(app: Any) -> RunManager:
    assert isinstance(app, FastAPI)
    manager: RunManager = app.state.run_manager
    return manager


def test_a_cancelled_run_stops_and_stays_cancelled(api: ApiUser, other_api: ApiUser) -> None:
    with gate_engine() as engine:
        case_id = _case(api, engine)
        started = api.post(f"/api/v1/cases/{case_id}/runs").json()
        url = f"/api/v1/cases/{case_id}/runs/{started['id']}"
        assert engine.wait_for_searches(1)  # the first query is held by the engine
        assert _until(api, url, {"running"})["status"] == "running"

        # Another user cannot see the run, let alone cancel it.
        assert other_api.post(f"{url}/cancel").status_code == 404
        cancelled = api.post(f"{url}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert (cancelled.json()["status"], cancelled.json()["error"]) == (
            "cancelled",
            "Cancelled.",
        )
        assert api.post(f"{url}/cancel").status_code == 409

        # The runner notices at its next heartbeat and stops while the engine still holds
        # the first query; the engine answering afterwards must not bring the run back.
        manager = _manager(api.client.app)
        _wait_for(lambda: not manager.under_way(started["id"]), what="the run's task to end")
        engine.release()
        run = api.get(url).json()
    assert run["status"] == "cancelled" and run["queries"] == []
    assert engine.arrived == 1  # max_concurrency 1: the other queries never went out


def test_a_finished_run_cannot_be_cancelled(api: ApiUser) -> None:
    with gate_engine() as engine:
        engine.release()
        case_id = _case(api, engine, queries=1)
        run = api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()
        assert run["status"] == "finished"
        response = api.post(f"/api/v1/cases/{case_id}/runs/{run['id']}/cancel")
    assert response.status_code == 409
    assert "already ended (finished)" in response.json()["detail"]


def test_waiting_requests_are_capped_per_user(api: ApiUser, other_api: ApiUser) -> None:
    with gate_engine() as engine:
        case_id = _case(api, engine, queries=1, concurrency=8)
        answers: list[int] = []

        def wait_for_run() -> None:
            answers.append(api.post(f"/api/v1/cases/{case_id}/runs?wait=true").status_code)

        waiters = [threading.Thread(target=wait_for_run) for _ in range(4)]
        for waiter in waiters:
            waiter.start()
        assert engine.wait_for_searches(4)  # four runs are in flight, their callers waiting

        refused = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
        assert refused.status_code == 429
        assert refused.headers["Retry-After"] == "5"
        assert "4 requests waiting" in refused.json()["detail"]
        # Without waiting, the same user may still start runs; other users may wait.
        unwaited = api.post(f"/api/v1/cases/{case_id}/runs")
        assert unwaited.status_code == 202
        other_case = _case(other_api, engine, queries=1, concurrency=8)
        other = threading.Thread(
            target=lambda: answers.append(
                other_api.post(f"/api/v1/cases/{other_case}/runs?wait=true").status_code
            )
        )
        other.start()
        assert engine.wait_for_searches(6)
        # The server still answers at once while six runs hang on the engine.
        assert api.get("/api/v1/health").status_code == 200

        engine.release()
        for waiter in [*waiters, other]:
            waiter.join(30)
        unwaited_url = f"/api/v1/cases/{case_id}/runs/{unwaited.json()['id']}"
        assert _until(api, unwaited_url, {"finished"})["status"] == "finished"
    assert answers == [200] * 5
    runs = api.get(f"/api/v1/cases/{case_id}/runs").json()
    assert len(runs) == 5  # four waited, one started without waiting; the refused one never ran


def _running_run(factory: sessionmaker[Session], case_id: int, beat_age_s: float) -> int:
    with session_scope(factory) as session:
        case = session.get(Case, case_id)
        assert case is not None
        run = run_service.create_run(session=session, case=case)
        run_store.mark_running(
            session=session, plan=run_inputs.load_plan(session=session, run_id=run.id)
        )
        beat = datetime.now(UTC) - timedelta(seconds=beat_age_s)
        session.execute(update(Run).where(Run.id == run.id).values(heartbeat_at=beat))
        session.commit()
        return run.id


def test_only_runs_whose_heartbeat_stopped_are_marked_interrupted(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    with gate_engine() as engine:
        case_id = _case(api, engine)
    alive = _running_run(session_factory, case_id, beat_age_s=5)
    gone = _running_run(session_factory, case_id, beat_age_s=120)
    with session_scope(session_factory) as session:
        assert run_orphans.fail_interrupted_runs(session=session, lease_s=60) == 1
    runs = {r["id"]: r for r in api.get(f"/api/v1/cases/{case_id}/runs").json()}
    assert runs[alive]["status"] == "running"
    assert runs[gone]["status"] == "failed"
    gone_detail = api.get(f"/api/v1/cases/{case_id}/runs/{gone}").json()
    assert gone_detail["error"].startswith("Interrupted: the process running it stopped")


def test_a_second_server_leaves_the_first_ones_runs_alone(
    api: ApiUser, session_factory: sessionmaker[Session], db_url: str, tmp_path: Path
) -> None:
    with gate_engine() as engine:
        case_id = _case(api, engine)
    alive = _running_run(session_factory, case_id, beat_age_s=1)
    gone = _running_run(session_factory, case_id, beat_age_s=600)
    second = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=tmp_path,
            database_url=db_url,
            secret_key="second",
        )
    )
    with TestClient(second):  # its startup checks for interrupted runs
        _wait_for(lambda: _manager(second).reaper_rounds >= 1, what="the second server's check")
    runs = {r["id"]: r["status"] for r in api.get(f"/api/v1/cases/{case_id}/runs").json()}
    assert runs[alive] == "running" and runs[gone] == "failed"


def test_the_case_page_cancels_a_run_under_way(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    with gate_engine() as engine:
        case_id = _case(api, engine)
        started = api.post(f"/api/v1/cases/{case_id}/runs").json()
        assert engine.wait_for_searches(1)
        progress = soup(client.get(f"/cases/{case_id}/runs/{started['id']}/progress"))
        form = one(progress, "#run-progress form")
        assert one(form, "#run-cancel").get_text() == "Cancel run"
        answer = client.post(
            str(form["action"]), data={"csrf_token": token}, headers={"HX-Request": "true"}
        )
        assert answer.status_code == 200
        assert answer.headers["HX-Trigger"] == "run-finished"
        shown = one(soup(answer), "#run-progress")
        assert shown["data-status"] == "cancelled"
        assert shown.select("#run-cancel") == []  # an ended run offers no cancel
        # Without the form's token nothing is cancelled (the run has already ended here,
        # so a second cancel by the form just shows it as it is).
        refused = client.post(str(form["action"]), data={"csrf_token": "wrong"})
        assert refused.status_code in (400, 403)
    run = api.get(f"/api/v1/cases/{case_id}/runs/{started['id']}").json()
    assert run["status"] == "cancelled"


def test_an_execution_that_lost_its_run_cannot_write_to_it(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    # Two executions of one run (say a retried one, or a stale one whose run id was reused):
    # only the one holding the lease records progress or finishes it.
    with gate_engine() as engine:
        case_id = _case(api, engine)
    with session_scope(session_factory) as session:
        case = session.get(Case, case_id)
        assert case is not None
        run_id = run_service.create_run(session=session, case=case).id
        old = run_inputs.load_plan(session=session, run_id=run_id)
        new = run_inputs.load_plan(session=session, run_id=run_id)
        assert old.lease != new.lease
        run_store.mark_running(session=session, plan=old)
        run_store.mark_running(session=session, plan=new)  # the run changes hands
        assert run_store.record_progress(session=session, plan=old, done=2) is None
        assert run_store.record_progress(session=session, plan=new, done=1) == "running"
        run_store.finish_run(session=session, plan=old, fetched=[], outcomes=[], ratings={})
        assert run_store.run_status(session=session, plan=new) == "running"
    run = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
    assert (run["status"], run["done"], run["queries"]) == ("running", 1, [])


def test_a_rating_given_while_the_run_fetches_counts_in_that_run(api: ApiUser) -> None:
    # The ratings are read as the last wave of queries is in flight, not when the run
    # starts: an engineer rating during a long run sees those ratings in its scores.
    with gate_engine() as engine:
        case_id = _case(api, engine, queries=6, concurrency=2)
        queries = api.get(f"/api/v1/cases/{case_id}/queries").json()
        late = next(q for q in queries if q["text"] == "query 5")
        started = api.post(f"/api/v1/cases/{case_id}/runs").json()
        url = f"/api/v1/cases/{case_id}/runs/{started['id']}"
        assert engine.wait_for_searches(2)  # the first wave is held; nothing came back yet
        rated = api.put(
            f"/api/v1/cases/{case_id}/queries/{late['id']}/ratings",
            json={"ratings": [{"doc_id": "1", "rating": 7}]},
        )
        assert rated.status_code == 200, rated.text
        engine.release()
        run = _until(api, url, {"finished", "failed"})
    assert run["status"] == "finished"
    rows = {row["query_id"]: row for row in run["queries"]}
    assert [d["rating"] for d in rows[late["id"]]["docs"]] == [7]
    others = [row for qid, row in rows.items() if qid != late["id"]]
    assert all(d["rating"] is None for row in others for d in row["docs"])

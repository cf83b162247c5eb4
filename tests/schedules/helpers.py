"""Builders for the schedules tests: a case through the API, runs written directly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.models import Run, RunQuery
from app.schedules import delivery
from app.schedules.delivery import DeliveryConfig
from app.schedules.ticks import evaluate_ended
from app.vocabulary import QueryStatus, RunStatus
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint

ENGINE_URL = "http://127.0.0.1:9/movies"  # never called: these runs are written directly


def new_case(api: ApiUser, queries: int = 0, name: str = "Movies") -> tuple[int, list[int]]:
    """Create a case (and its endpoint) with ``queries`` queries; return its id and theirs."""
    endpoint = make_endpoint(api, ENGINE_URL)
    case = make_case(api, endpoint["id"], name=name)
    ids = add_queries(api, case["id"], [f"query {i}" for i in range(queries)]) if queries else {}
    return int(case["id"]), [ids[f"query {i}"] for i in range(queries)]


def add_run(
    db: Session,
    case_id: int,
    query_ids: list[int],
    scores: Sequence[float | None],
    *,
    status: RunStatus = RunStatus.FINISHED,
    finished_at: datetime | None = None,
    errors: int = 0,
) -> Run:
    """Write a finished run whose queries scored ``scores``; its case score is their mean."""
    scored = [s for s in scores if s is not None]
    score = sum(scored) / len(scored) if scored else None
    run = Run(
        case_id=case_id,
        try_number=1,
        status=status,
        case_score=score,
        recorded_score=score,
        total=len(query_ids),
        done=len(query_ids),
        scored=len(scored),
        errors=errors,
        finished_at=finished_at or datetime.now(UTC),
        error="engine down" if status == RunStatus.FAILED else None,
    )
    db.add(run)
    db.flush()
    rows: list[Any] = [
        RunQuery(
            run_id=run.id,
            query_id=qid,
            text=f"query {i}",
            position=i,
            status=QueryStatus.SCORED if s is not None else QueryStatus.ERROR,
            score=s,
        )
        for i, (qid, s) in enumerate(zip(query_ids, scores, strict=True))
    ]
    db.add_all(rows)
    db.commit()
    return run


@pytest.fixture
def fast_retries() -> Iterator[None]:
    """Alert deliveries retried after 0.1 s and 0.2 s (then given up), for the test."""
    previous = delivery.install_config(
        DeliveryConfig(base_url="http://relevo.test", backoff_s=(0.1, 0.2))
    )
    yield
    delivery.install_config(previous)


def alerting_case(api: ApiUser, db: Session, hook_ids: list[int], **alert: Any) -> int:
    """A case whose drop alert goes to these webhooks, and its run that triggers it."""
    case_id, queries = new_case(api, queries=3)
    body = {"kind": "drop", "points": 5, "webhook_ids": hook_ids, **alert}
    assert api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
    add_run(db, case_id, queries, [80, 70, 60])
    return add_run(db, case_id, queries, [40, 70, 55]).id


def deliver(factory: sessionmaker[Session], run_id: int) -> None:
    """Evaluate the run's alerts and deliver what they triggered, retries included."""
    events = evaluate_ended(session_factory=factory, run_id=run_id)
    assert events
    asyncio.run(delivery.drain(session_factory=factory, event_ids=events))

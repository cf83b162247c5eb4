"""Builders for the schedules tests: a case through the API, runs written directly."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from app.models import Run, RunQuery
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

"""The home dashboard: every case the user may see, how it is doing, worst change first."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import access
from app.models import Alert, AlertCheck, Run, User
from app.schedules.schemas import Dashboard, DashboardCase
from app.schedules.service import as_utc, next_runs
from app.vocabulary import RunStatus

__all__ = ["SPARKLINE_RUNS", "dashboard"]

SPARKLINE_RUNS = 20
WEEK = timedelta(days=7)


def _delta_7d(runs: list[tuple[float, datetime]], now: datetime) -> float | None:
    """runs: (score, finished_at) oldest first. Latest minus the first within the week."""
    recent = [score for score, at in runs if at >= now - WEEK]
    return round(recent[-1] - recent[0], 4) if len(recent) >= 2 else None


def dashboard(*, session: Session, user: User, now: datetime | None = None) -> Dashboard:
    """Return the user's cases with score, sparkline, delta_7d, runs and alert state."""
    moment = as_utc(now or datetime.now(UTC))
    cases = access.visible_cases(session=session, user=user)
    ids = [c.id for c in cases]
    finished: dict[int, list[tuple[float, datetime]]] = defaultdict(list)
    last_ended: dict[int, tuple[int, datetime | None]] = {}
    if ids:
        rows = session.execute(
            select(Run.case_id, Run.id, Run.status, Run.case_score, Run.finished_at)
            .where(Run.case_id.in_(ids), Run.status.in_([RunStatus.FINISHED, RunStatus.FAILED]))
            .order_by(Run.id)
        ).all()
        for case_id, run_id, status, score, at in rows:
            last_ended[case_id] = (run_id, at)
            if status == RunStatus.FINISHED and score is not None and at is not None:
                finished[case_id].append((float(score), as_utc(at)))
    with_alerts = set(
        session.scalars(select(Alert.case_id).where(Alert.case_id.in_(ids or [-1])).distinct())
    )
    checks = dict(
        session.execute(
            select(AlertCheck.run_id, AlertCheck.triggered).where(
                AlertCheck.run_id.in_([r for r, _ in last_ended.values()] or [-1])
            )
        ).all()
    )
    upcoming = next_runs(session=session, case_ids=ids)
    items = []
    for case in cases:
        runs = finished.get(case.id, [])
        ended = last_ended.get(case.id)
        state = None
        if case.id in with_alerts:
            state = "triggered" if ended is not None and checks.get(ended[0]) else "ok"
        items.append(
            DashboardCase(
                id=case.id,
                name=case.name,
                score=runs[-1][0] if runs else None,
                delta_7d=_delta_7d(runs, moment),
                sparkline=[round(s, 4) for s, _ in runs[-SPARKLINE_RUNS:]],
                last_run_at=None if ended is None or ended[1] is None else as_utc(ended[1]),
                next_run_at=upcoming.get(case.id),
                alert_state=state,
            )
        )
    items.sort(
        key=lambda c: (c.delta_7d is None, c.delta_7d or 0.0, c.alert_state != "triggered", c.name)
    )
    return Dashboard(cases=items)

"""The home dashboard: every case the user may see, how it is doing, worst change first.

Its changes (since the run before, over the week) are ``app.runs.change``'s: both runs
re-scored with today's ratings, weights and aggregate, the number the case page's tiles,
the alerts and compare show; the score and sparkline are the runs' stored case scores.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import access
from app.cases import case_runs
from app.db import as_utc
from app.models import Alert, AlertCheck, AlertEvent, Case, Run, User
from app.runs.change import change_since, rescored
from app.schedules.schemas import Dashboard, DashboardAlert, DashboardCase
from app.schedules.service import next_runs
from app.vocabulary import RunStatus

__all__ = ["SPARKLINE_RUNS", "dashboard"]

SPARKLINE_RUNS = 20
WEEK = timedelta(days=7)


def _deltas(
    session: Session, case: Case, runs: list[tuple[int, datetime]], now: datetime
) -> tuple[float | None, float | None]:
    """runs: (id, finished_at) of the case's scored runs, oldest first. Return the change
    since the run before and over the week, each between two runs re-scored alike."""
    if not runs:
        return None, None
    latest = session.get(Run, runs[-1][0])
    if latest is None:
        return None, None
    since = change_since(session=session, case=case, run=latest)
    recent = [run_id for run_id, at in runs if at >= now - WEEK]
    week = None
    if len(recent) >= 2:
        first = session.get(Run, recent[0])
        if first is not None:  # the latest run re-scored once, for both changes
            other = rescored(
                session=session,
                case=case,
                run=first,
                scorer_ids=list(since.run.case_scores),
                primary=since.primary_id,
            )
            week = replace(since, other=other).delta()
    last = since.delta()
    return (
        None if week is None else round(week, 4),
        None if last is None else round(last, 4),
    )


def _standing_alerts(
    session: Session, ids: list[int]
) -> tuple[set[int], dict[int, DashboardAlert]]:
    """Return the cases with alert rules, and each case's newest alert event that stands.

    An event stands until a later run of its case was evaluated with the rule firing nothing
    on it: any such run for a ``run_failed`` rule, a finished run with a score for the rules
    on the score (a run that failed cannot tell whether the score came back).
    """
    scope = ids or [-1]
    with_alerts = set(
        session.scalars(select(Alert.case_id).where(Alert.case_id.in_(scope)).distinct())
    )
    checked = select(Run.case_id, func.max(Run.id)).join(AlertCheck, AlertCheck.run_id == Run.id)
    last_checked: dict[int, int] = {
        case_id: run_id
        for case_id, run_id in session.execute(
            checked.where(Run.case_id.in_(scope)).group_by(Run.case_id)
        )
    }
    last_scored: dict[int, int] = {
        case_id: run_id
        for case_id, run_id in session.execute(
            checked.where(
                Run.case_id.in_(scope),
                Run.status == RunStatus.FINISHED,
                Run.case_score.is_not(None),
            ).group_by(Run.case_id)
        )
    }
    newest = (
        select(func.max(AlertEvent.id))
        .where(AlertEvent.case_id.in_(scope))
        .group_by(AlertEvent.alert_id)
    )
    standing: dict[int, DashboardAlert] = {}
    events = session.execute(
        select(AlertEvent, Alert.kind)
        .join(Alert, Alert.id == AlertEvent.alert_id)
        .where(AlertEvent.id.in_(newest))
        .order_by(AlertEvent.id)
    ).all()
    for event, kind in events:
        after = last_checked if kind == "run_failed" else last_scored
        if after.get(event.case_id, 0) > event.run_id:
            continue  # cleared by a later run
        reason = (event.payload or {}).get("alert", {}).get("reason")
        standing[event.case_id] = DashboardAlert(
            alert_id=event.alert_id,
            kind=kind,
            reason=str(reason or kind),
            run_id=event.run_id,
            created_at=as_utc(event.created_at),
        )
    return with_alerts, standing


def dashboard(*, session: Session, user: User, now: datetime | None = None) -> Dashboard:
    """Return the user's cases with score, sparkline, deltas, runs and alert state."""
    moment = as_utc(now or datetime.now(UTC))
    cases = access.visible_cases(session=session, user=user)
    ids = [c.id for c in cases]
    finished: dict[int, list[tuple[float, datetime]]] = defaultdict(list)
    finished_ids: dict[int, list[tuple[int, datetime]]] = defaultdict(list)
    last_ended: dict[int, tuple[int, datetime | None, bool]] = {}
    if ids:
        rows = session.execute(
            select(
                Run.case_id,
                Run.id,
                Run.status,
                Run.case_score,
                Run.finished_at,
                Run.errors,
                Run.total,
            )
            .where(
                Run.case_id.in_(ids),
                Run.status.in_([RunStatus.FINISHED, RunStatus.FAILED]),
                case_runs.of_case(),  # not a sweep's combinations, nor an agent's drafts
            )
            .order_by(Run.id)
        ).all()
        for case_id, run_id, status, score, at, errors, total in rows:
            # A run whose every query errored has no score: it failed as surely as one that
            # could not run at all, and the score shown is then an older run's.
            failed = status == RunStatus.FAILED or (bool(total) and errors >= total)
            last_ended[case_id] = (run_id, at, failed)
            if status == RunStatus.FINISHED and score is not None and at is not None:
                finished[case_id].append((float(score), as_utc(at)))
                finished_ids[case_id].append((run_id, as_utc(at)))
    with_alerts, standing = _standing_alerts(session, ids)
    upcoming = next_runs(session=session, case_ids=ids)
    items = []
    for case in cases:
        runs = finished.get(case.id, [])
        ended = last_ended.get(case.id)
        delta_7d, delta_last_run = _deltas(session, case, finished_ids[case.id], moment)
        state = None
        if case.id in with_alerts:
            state = "triggered" if case.id in standing else "ok"
        items.append(
            DashboardCase(
                id=case.id,
                name=case.name,
                score=runs[-1][0] if runs else None,
                delta_7d=delta_7d,
                sparkline=[round(s, 4) for s, _ in runs[-SPARKLINE_RUNS:]],
                last_run_at=None if ended is None or ended[1] is None else as_utc(ended[1]),
                next_run_at=upcoming.get(case.id),
                alert_state=state,
                delta_last_run=delta_last_run,
                last_run_failed=ended is not None and ended[2],
                alert=standing.get(case.id),
            )
        )
    items.sort(
        key=lambda c: (c.delta_7d is None, c.delta_7d or 0.0, c.alert_state != "triggered", c.name)
    )
    return Dashboard(cases=items)

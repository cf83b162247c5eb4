"""The home dashboard: every case the user may see, how it is doing, worst change first.

Its changes (since the run before, over the week) are ``app.runs.change``'s: both runs
re-scored with today's ratings, weights and aggregate, the number the case page's tiles,
the alerts and compare show; the score and sparkline are the runs' stored case scores.
The re-scores are ``app.runs.rescore_cache``'s: a load re-scores only the runs whose
ratings, queries, scorer, aggregate or stored outcomes changed since an earlier load.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import access
from app.cases import case_runs
from app.db import as_utc
from app.models import Alert, AlertCheck, AlertEvent, Case, Run, User
from app.runs.change import primary_id
from app.runs.rescore_cache import Wanted, rescored_case_scores
from app.schedules.schemas import Dashboard, DashboardAlert, DashboardCase
from app.schedules.service import next_runs
from app.vocabulary import RunStatus

__all__ = ["SPARKLINE_RUNS", "dashboard"]

SPARKLINE_RUNS = 20
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class _Runs:
    """A case's runs a change is between: its latest scored run (``scored``, oldest first:
    (id, finished_at)), the finished case run before that (``previous``), and the metric the
    latest run scored with (its ``change_since`` primary)."""

    scored: list[tuple[int, datetime]]
    previous: int | None
    primary: int

    def week(self, now: datetime) -> int | None:
        """The first scored run of the week, when the week has another after it."""
        recent = [run_id for run_id, at in self.scored if at >= now - WEEK]
        return recent[0] if len(recent) >= 2 else None

    def wanted(self, case: Case, now: datetime) -> list[Wanted]:
        """The runs whose re-scored primary scores the changes are between."""
        if not self.scored:
            return []
        # The primary alone: a metric's case score is summed apart from the others'
        # (``app.metrics.summarize``), so it is change_since's whatever else it re-scores.
        ids = dict.fromkeys([self.scored[-1][0], self.previous, self.week(now)])
        metrics = (self.primary,)
        return [Wanted(case, i, metrics, self.primary) for i in ids if i is not None]


def _deltas(
    runs: _Runs, scores: Mapping[int, float | None], now: datetime
) -> tuple[float | None, float | None]:
    """Return the change over the week and since the run before, each between the latest
    run and the other, both re-scored alike (``change_since(...).delta()``)."""
    if not runs.scored:
        return None, None
    latest = scores.get(runs.scored[-1][0])

    def since(other: int | None) -> float | None:
        theirs = None if other is None else scores.get(other)
        return None if latest is None or theirs is None else round(latest - theirs, 4)

    return since(runs.week(now)), since(runs.previous)


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


@dataclass
class _History:
    """What the dashboard reads of the cases' ended runs (oldest first), by case id."""

    scores: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    runs: dict[int, _Runs] = field(default_factory=dict)
    last_ended: dict[int, tuple[int, datetime | None, bool]] = field(default_factory=dict)


def _history(session: Session, ids: list[int]) -> _History:
    """Return the cases' stored scores, the runs their changes are between and last runs."""
    history = _History()
    if not ids:
        return history
    rows = session.execute(
        select(
            Run.case_id,
            Run.id,
            Run.status,
            Run.case_score,
            Run.finished_at,
            Run.errors,
            Run.total,
            Run.scorer_id,
        )
        .where(
            Run.case_id.in_(ids),
            Run.status.in_([RunStatus.FINISHED, RunStatus.FAILED]),
            case_runs.of_case(),  # not a sweep's combinations, nor an agent's drafts
        )
        .order_by(Run.id)
    ).all()
    scored: dict[int, list[tuple[int, datetime]]] = defaultdict(list)
    finished: dict[int, list[int]] = defaultdict(list)
    scorer: dict[int, int | None] = {}
    for case_id, run_id, status, score, at, errors, total, scorer_id in rows:
        # A run whose every query errored has no score: it failed as surely as one that
        # could not run at all, and the score shown is then an older run's.
        failed = status == RunStatus.FAILED or (bool(total) and errors >= total)
        history.last_ended[case_id] = (run_id, at, failed)
        if status == RunStatus.FINISHED:
            finished[case_id].append(run_id)
        if status == RunStatus.FINISHED and score is not None and at is not None:
            history.scores[case_id].append(float(score))
            scored[case_id].append((run_id, as_utc(at)))
            scorer[case_id] = scorer_id
    for case_id, runs in scored.items():
        latest = runs[-1][0]
        # The case run before the latest (``previous_case_run``), scored or not.
        previous = max((i for i in finished[case_id] if i < latest), default=None)
        history.runs[case_id] = _Runs(runs, previous, primary_id(scorer[case_id]))
    return history


def _changes(
    session: Session, cases: list[Case], history: _History, now: datetime
) -> dict[int, tuple[float | None, float | None]]:
    """Return each case's change over the week and since the run before, by case id."""
    wanted = [
        w
        for case in cases
        if case.id in history.runs
        for w in history.runs[case.id].wanted(case, now)
    ]
    scores = rescored_case_scores(session=session, wanted=wanted)
    primary = {w.run_id: s.get(w.primary) for w, s in zip(wanted, scores, strict=True)}
    return {case_id: _deltas(runs, primary, now) for case_id, runs in history.runs.items()}


def dashboard(*, session: Session, user: User, now: datetime | None = None) -> Dashboard:
    """Return the user's cases with score, sparkline, deltas, runs and alert state."""
    moment = as_utc(now or datetime.now(UTC))
    cases = access.visible_cases(session=session, user=user)
    ids = [c.id for c in cases]
    history = _history(session, ids)
    changes = _changes(session, cases, history, moment)
    with_alerts, standing = _standing_alerts(session, ids)
    upcoming = next_runs(session=session, case_ids=ids)
    items = []
    for case in cases:
        scores = history.scores.get(case.id, [])
        ended = history.last_ended.get(case.id)
        delta_7d, delta_last_run = changes.get(case.id, (None, None))
        state = None
        if case.id in with_alerts:
            state = "triggered" if case.id in standing else "ok"
        items.append(
            DashboardCase(
                id=case.id,
                name=case.name,
                score=scores[-1] if scores else None,
                delta_7d=delta_7d,
                sparkline=[round(s, 4) for s in scores[-SPARKLINE_RUNS:]],
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

"""Evaluating a case's alert rules when one of its runs ends.

Called once per ended run (an ``alert_checks`` row makes a second call a no-op, whichever
process makes it). A rule that triggers becomes an event with the payload its deliveries
send, and one pending delivery per webhook and e-mail address; delivering is someone
else's work (app.schedules.delivery), so evaluation never waits on the network.

Every score a rule reads is ``app.runs.change``'s: the run and the run it is compared with
(the previous case run, or the baseline) re-scored with today's ratings, weights and
aggregate, the numbers of the case's badge, its tiles, the dashboard and compare. A rule
added after a run ended is not evaluated on that run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.cases import case_runs
from app.db import as_utc
from app.models import Alert, AlertCheck, AlertEvent, Case, Delivery, Run, RunQuery, Webhook
from app.runs.change import BASIS, Change, change_since
from app.scoring.significance import paired_stats
from app.vocabulary import RunStatus

__all__ = ["EVENT", "evaluate_run"]

log = logging.getLogger(__name__)
EVENT = "alert.triggered"
WORST = 10
ENDED = (RunStatus.FINISHED, RunStatus.FAILED)


@dataclass(frozen=True)
class Verdict:
    """Why an alert triggered, and the run's change against the run it compared with."""

    reason: str
    change: Change


def _p_value(change: Change, scorer_id: int | None) -> float | None:
    _ids, base, current = change.pairs(scorer_id)
    return paired_stats(base, current).randomization_p if base else None


def _verdict(
    session: Session, alert: Alert, case: Case, run: Run, previous: Change
) -> Verdict | None:
    kind, scorer_id = alert.kind, alert.metric_scorer_id
    if kind == "run_failed":
        share = run.errors / run.total if run.total else 0.0
        if run.status == RunStatus.FAILED:
            return Verdict(f"run {run.id} failed: {run.error or 'no reason given'}", previous)
        if share > alert.error_share:
            return Verdict(
                f"{run.errors} of {run.total} queries errored "
                f"({share:.0%} > {alert.error_share:.0%})",
                previous,
            )
        return None
    # The badge's number: the run re-scored with today's ratings, weights and aggregate.
    score = previous.score(scorer_id)
    if run.status != RunStatus.FINISHED or score is None:
        return None
    if kind == "below":
        if alert.threshold is not None and score < alert.threshold:
            return Verdict(f"score {score:.2f} is below {alert.threshold:g}", previous)
        return None
    change = previous
    if kind == "drop_from_baseline":
        baseline = session.get(Run, alert.baseline_run_id) if alert.baseline_run_id else None
        if baseline is None or baseline.case_id != run.case_id:
            return None
        change = change_since(session=session, case=case, run=run, other=baseline)
    other_score, delta = change.other_score(scorer_id), change.delta(scorer_id)
    if change.other_id is None or other_score is None or delta is None:
        return None
    if kind in ("drop", "drop_from_baseline"):
        need = alert.points or 0.0
        if delta < 0 and -delta >= need:
            label = "the baseline" if kind == "drop_from_baseline" else "the previous run"
            return Verdict(
                f"score fell {-delta:.2f} points from {label} (run {change.other_id})", change
            )
        return None
    if kind == "significant_drop":
        p = _p_value(change, scorer_id)
        if delta < 0 and p is not None and p < alert.alpha:
            return Verdict(
                f"score fell {-delta:.2f} points from run {change.other_id}, "
                f"p = {p:.4f} < {alert.alpha:g}",
                change,
            )
    return None


def _worst(session: Session, run: Run, change: Change, scorer_id: int | None) -> list[Any]:
    if change.other_id is None:
        return []
    ids, base, current = change.pairs(scorer_id)
    texts = dict(
        session.execute(
            select(RunQuery.query_id, RunQuery.text).where(RunQuery.run_id == run.id)
        ).all()
    )
    deltas = sorted(
        ((c - b, qid) for qid, b, c in zip(ids, base, current, strict=True) if c - b < 0),
    )
    return [{"id": qid, "text": texts.get(qid), "delta": round(d, 4)} for d, qid in deltas[:WORST]]


def _payload(
    session: Session, *, alert: Alert, case: Case, run: Run, verdict: Verdict, base_url: str
) -> dict[str, Any]:
    scorer_id, change = alert.metric_scorer_id, verdict.change
    score, other_score, delta = (
        change.score(scorer_id),
        change.other_score(scorer_id),
        change.delta(scorer_id),
    )
    delta = None if delta is None else round(delta, 4)
    p = _p_value(change, scorer_id) if run.status == RunStatus.FINISHED else None
    url = f"{base_url.rstrip('/')}/cases/{case.id}"
    text = f'Relevo alert on case "{case.name}" ({alert.kind}): {verdict.reason}. {url}'
    return {
        "event": EVENT,
        "case": {"id": case.id, "name": case.name, "url": url},
        "alert": {"id": alert.id, "kind": alert.kind, "reason": verdict.reason},
        "run": {"id": run.id, "score": score, "status": str(run.status), "trigger": run.trigger},
        "previous": None
        if change.other_id is None
        else {"id": change.other_id, "score": other_score},
        "delta": delta,
        "p": p,
        # Which numbers these are: both runs re-scored with today's ratings and settings.
        "scores": {"basis": BASIS, "aggregate": change.aggregate},
        "worst_queries": _worst(session, run, change, scorer_id),
        "text": text,
    }


def evaluate_run(*, session: Session, run_id: int, base_url: str, email_enabled: bool) -> int:
    """Check the alert rules of an ended run's case once; return how many events triggered."""
    run = session.get(Run, run_id)
    # A sweep's combinations (and an agent's drafts) search with knobs or a template the case
    # does not have: a poor one is an experiment, not a drop of the case (the run adopted by
    # Apply is the case's own).
    if run is None or run.status not in ENDED or not case_runs.is_of_case(run):
        return 0
    check = AlertCheck(run_id=run.id)
    session.add(check)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()  # already checked (by this or another process)
        return 0
    case = session.get(Case, run.case_id)
    rules = list(session.scalars(select(Alert).where(Alert.case_id == run.case_id)))
    # A rule judges the runs that end once it exists, never one that ended before.
    ended = as_utc(run.finished_at) if run.finished_at is not None else None
    rules = [a for a in rules if ended is None or as_utc(a.created_at) <= ended]
    previous = (
        None if case is None or not rules else change_since(session=session, case=case, run=run)
    )
    count = 0
    for alert in rules:
        if case is None or previous is None:
            continue
        verdict = _verdict(session, alert, case, run, previous)
        if verdict is None:
            continue
        payload = _payload(
            session, alert=alert, case=case, run=run, verdict=verdict, base_url=base_url
        )
        event = AlertEvent(alert_id=alert.id, case_id=case.id, run_id=run.id, payload=payload)
        session.add(event)
        session.flush()
        _queue_deliveries(session, alert, event, email_enabled)
        count += 1
    check.triggered = count > 0
    session.commit()
    return count


def _queue_deliveries(session: Session, alert: Alert, event: AlertEvent, email: bool) -> None:
    existing = set(
        session.scalars(select(Webhook.id).where(Webhook.id.in_(alert.webhook_ids or [-1])))
    )
    for webhook_id in alert.webhook_ids:
        if webhook_id in existing:
            session.add(Delivery(event_id=event.id, webhook_id=webhook_id, status="pending"))
    for address in alert.email:
        status = "pending" if email else "failed"
        session.add(
            Delivery(
                event_id=event.id,
                email=address,
                status=status,
                error=None if email else "No SMTP server is configured (RELEVO_SMTP_URL).",
            )
        )

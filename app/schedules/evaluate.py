"""Evaluating a case's alert rules when one of its runs ends.

Called once per ended run (an ``alert_checks`` row makes a second call a no-op, whichever
process makes it). A rule that triggers becomes an event with the payload its deliveries
send, and one pending delivery per webhook and e-mail address; delivering is someone
else's work (app.schedules.delivery), so evaluation never waits on the network.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models import Alert, AlertCheck, AlertEvent, Case, Delivery, Run, RunQuery, Webhook
from app.runs import stored
from app.scoring.significance import paired_stats
from app.vocabulary import RunStatus

__all__ = ["EVENT", "evaluate_run"]

log = logging.getLogger(__name__)
EVENT = "alert.triggered"
WORST = 10
ENDED = (RunStatus.FINISHED, RunStatus.FAILED)


@dataclass(frozen=True)
class Verdict:
    """Why an alert triggered, and against which run."""

    reason: str
    other: Run | None


def _score(run: Run | None, scorer_id: int | None) -> float | None:
    if run is None:
        return None
    if scorer_id is not None:
        for metric in getattr(run, "recorded_metrics", None) or []:
            if metric.get("scorer_id") == scorer_id:
                value = metric.get("case_score")
                return None if value is None else float(value)
        return None
    value = run.recorded_score if run.recorded_score is not None else run.case_score
    return value


def _query_scores(session: Session, run: Run, scorer_id: int | None) -> dict[int, float]:
    rows = session.execute(
        select(RunQuery.query_id, RunQuery.score, RunQuery.metric_scores).where(
            RunQuery.run_id == run.id
        )
    ).all()
    scores: dict[int, float] = {}
    for qid, score, metrics in rows:
        value = score if scorer_id is None else (metrics or {}).get(str(scorer_id))
        if qid is not None and value is not None:
            scores[qid] = float(value)
    return scores


def _previous(session: Session, run: Run) -> Run | None:
    return session.scalar(
        select(Run)
        .where(
            Run.case_id == run.case_id,
            Run.id < run.id,
            Run.status == RunStatus.FINISHED,
            stored.case_run(),
        )
        .order_by(Run.id.desc())
        .limit(1)
    )


def _pairs(
    session: Session, run: Run, other: Run, scorer_id: int | None
) -> tuple[list[int], list[float], list[float]]:
    mine = _query_scores(session, run, scorer_id)
    theirs = _query_scores(session, other, scorer_id)
    ids = sorted(set(mine) & set(theirs))
    return ids, [theirs[i] for i in ids], [mine[i] for i in ids]


def _p_value(session: Session, run: Run, other: Run | None, scorer_id: int | None) -> float | None:
    if other is None:
        return None
    _ids, base, current = _pairs(session, run, other, scorer_id)
    return paired_stats(base, current).randomization_p if base else None


def _verdict(session: Session, alert: Alert, run: Run, previous: Run | None) -> Verdict | None:
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
    score = _score(run, scorer_id)
    if run.status != RunStatus.FINISHED or score is None:
        return None
    if kind == "below":
        if alert.threshold is not None and score < alert.threshold:
            return Verdict(f"score {score:.2f} is below {alert.threshold:g}", previous)
        return None
    other = previous
    if kind == "drop_from_baseline":
        other = session.get(Run, alert.baseline_run_id) if alert.baseline_run_id else None
    other_score = _score(other, scorer_id)
    if other is None or other_score is None:
        return None
    delta = score - other_score
    if kind in ("drop", "drop_from_baseline"):
        need = alert.points or 0.0
        if delta < 0 and -delta >= need:
            label = "the baseline" if kind == "drop_from_baseline" else "the previous run"
            return Verdict(f"score fell {-delta:.2f} points from {label} (run {other.id})", other)
        return None
    if kind == "significant_drop":
        p = _p_value(session, run, other, scorer_id)
        if delta < 0 and p is not None and p < alert.alpha:
            return Verdict(
                f"score fell {-delta:.2f} points from run {other.id}, "
                f"p = {p:.4f} < {alert.alpha:g}",
                other,
            )
    return None


def _worst(session: Session, run: Run, other: Run | None, scorer_id: int | None) -> list[Any]:
    if other is None:
        return []
    ids, base, current = _pairs(session, run, other, scorer_id)
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
    scorer_id = alert.metric_scorer_id
    score, other = _score(run, scorer_id), verdict.other
    other_score = _score(other, scorer_id)
    delta = None if score is None or other_score is None else round(score - other_score, 4)
    p = _p_value(session, run, other, scorer_id) if run.status == RunStatus.FINISHED else None
    url = f"{base_url.rstrip('/')}/cases/{case.id}"
    text = f'Relevo alert on case "{case.name}" ({alert.kind}): {verdict.reason}. {url}'
    return {
        "event": EVENT,
        "case": {"id": case.id, "name": case.name, "url": url},
        "alert": {"id": alert.id, "kind": alert.kind, "reason": verdict.reason},
        "run": {"id": run.id, "score": score, "status": str(run.status), "trigger": run.trigger},
        "previous": None if other is None else {"id": other.id, "score": other_score},
        "delta": delta,
        "p": p,
        "worst_queries": _worst(session, run, other, scorer_id),
        "text": text,
    }


def evaluate_run(*, session: Session, run_id: int, base_url: str, email_enabled: bool) -> int:
    """Check the alert rules of an ended run's case once; return how many events triggered."""
    run = session.get(Run, run_id)
    # A sweep's combinations search with knobs the case does not have: a poor one is an
    # experiment, not a drop of the case (the run adopted by Apply is the case's own).
    if run is None or run.status not in ENDED or not stored.is_of_case(run):
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
    previous = _previous(session, run)
    count = 0
    for alert in rules:
        verdict = _verdict(session, alert, run, previous)
        if verdict is None or case is None:
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

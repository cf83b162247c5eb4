"""What a judge run's runner calls, each in its own short transaction: start, reserve, store,
finish.

Spend is written ahead: before a call is sent, :func:`reserve` adds its worst case to the
run's ``reserved_*`` (and refuses once a cancel was asked); :func:`store` settles it with
what the call cost. Whatever a stopped process left reserved is counted as spent when the
run starts again (or ends), so the recorded spend never falls below what was billed, and a
run that keeps crashing still stops at its budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.judges import service as judges
from app.judges.judge import JudgeConfig, Outcome
from app.judges.prompt import prompt_sha256
from app.judges.run_pairs import PairJob, cached_entries, pair_jobs
from app.models import Book, Judge, JudgeCacheEntry, JudgeFailure, JudgeJudgement, JudgeRun
from app.models.base import utcnow

__all__ = ["Reservation", "Result", "RunPlan", "finish", "reserve", "start", "store"]


@dataclass(frozen=True)
class RunPlan:
    """What a starting (or resumed) run needs: the judge's config and the pairs left."""

    run_id: int
    owner_id: int
    config: JudgeConfig
    scale: list[float]
    model: str
    prompt_hash: str
    jobs: list[PairJob]
    cache: dict[str, tuple[float | None, str | None, int, int, str | None]]


def start(*, session: Session, run_id: int) -> RunPlan | None:
    """Mark a queued run running and return its plan; None when it is not to be executed."""
    run = session.get(JudgeRun, run_id, with_for_update=True)
    if run is None or run.status not in ("queued", "running") or run.cancel_requested:
        return None
    _charge_reserved(run)  # calls of a process that stopped: possibly billed
    judge = session.get(Judge, run.judge_id)
    book = session.get(Book, run.book_id)
    if judge is None or book is None:
        return None
    done = set(
        session.scalars(select(JudgeJudgement.pair_id).where(JudgeJudgement.run_id == run.id))
    ) | set(session.scalars(select(JudgeFailure.pair_id).where(JudgeFailure.run_id == run.id)))
    pending = [i for i in run.pair_ids if i not in done]
    try:
        config = judges.config_of(judge)
    except Conflict as exc:
        run.status, run.message, run.finished_at = "failed", str(exc), utcnow()
        session.commit()
        return None
    jobs = pair_jobs(session=session, book=book, judge=judge, pair_ids=pending)
    entries = cached_entries(session=session, owner_id=judge.owner_id, keys=[j.key for j in jobs])
    run.status, run.heartbeat_at = "running", utcnow()
    session.commit()
    return RunPlan(
        run_id=run.id,
        owner_id=judge.owner_id,
        config=config,
        scale=[float(v) for v in book.scale],
        model=judge.model,
        prompt_hash=prompt_sha256(judges.template_of(judge)),
        jobs=jobs,
        cache={
            k: (e.rating, e.explanation, e.tokens_in, e.tokens_out, e.raw_reply)
            for k, e in entries.items()
        },
    )


@dataclass(frozen=True)
class Reservation:
    """The worst case of one call, written before it is sent."""

    tokens_in: int
    tokens_out: int
    usd: float


@dataclass(frozen=True)
class Result:
    """One pair's outcome, as the runner hands it to :func:`store` (with its reservation)."""

    job: PairJob
    outcome: Outcome
    cached: bool
    reserved: Reservation | None = None


def reserve(*, session: Session, run_id: int, reservation: Reservation) -> bool:
    """Record a call's worst case before it is sent; False (nothing recorded) once cancelled."""
    done = session.execute(
        update(JudgeRun)
        .where(JudgeRun.id == run_id, JudgeRun.cancel_requested.is_(False))
        .values(
            reserved_usd=JudgeRun.reserved_usd + reservation.usd,
            reserved_tokens_in=JudgeRun.reserved_tokens_in + reservation.tokens_in,
            reserved_tokens_out=JudgeRun.reserved_tokens_out + reservation.tokens_out,
        )
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return getattr(done, "rowcount", 0) == 1


def _charge_reserved(run: JudgeRun) -> None:
    """Count what is still reserved as spent: calls whose result will never be stored."""
    run.cost_usd += max(0.0, run.reserved_usd)
    run.tokens_in += max(0, run.reserved_tokens_in)
    run.tokens_out += max(0, run.reserved_tokens_out)
    run.reserved_usd, run.reserved_tokens_in, run.reserved_tokens_out = 0.0, 0, 0


def store(*, session: Session, plan: RunPlan, results: Sequence[Result]) -> bool:
    """Write results and the run's counters; return whether a cancel was asked for."""
    run = session.get(JudgeRun, plan.run_id, with_for_update=True)
    if run is None:
        return True
    run.heartbeat_at = utcnow()
    if not results:
        session.commit()
        return run.cancel_requested
    ids = [r.job.pair_id for r in results]
    existing = {
        j.pair_id: j
        for j in session.scalars(
            select(JudgeJudgement).where(
                JudgeJudgement.judge_id == run.judge_id, JudgeJudgement.pair_id.in_(ids)
            )
        )
    }
    session.execute(
        delete(JudgeFailure).where(JudgeFailure.run_id == run.id, JudgeFailure.pair_id.in_(ids))
    )
    new_keys: dict[str, Result] = {}
    for result in results:
        _store_one(session, run, plan, result, existing.get(result.job.pair_id))
        if result.outcome.rating is not None and not result.cached:
            new_keys[result.job.key] = result
    _cache(session, plan.owner_id, new_keys)
    session.commit()
    return run.cancel_requested


def _store_one(
    session: Session, run: JudgeRun, plan: RunPlan, result: Result, row: JudgeJudgement | None
) -> None:
    outcome = result.outcome
    if result.reserved is not None:  # settled: its real cost replaces its worst case
        run.reserved_usd = max(0.0, run.reserved_usd - result.reserved.usd)
        run.reserved_tokens_in = max(0, run.reserved_tokens_in - result.reserved.tokens_in)
        run.reserved_tokens_out = max(0, run.reserved_tokens_out - result.reserved.tokens_out)
    if not result.cached:
        run.tokens_in += outcome.tokens_in
        run.tokens_out += outcome.tokens_out
        run.cost_usd += outcome.cost_usd
    if outcome.rating is None:
        run.failed += 1
        session.add(
            JudgeFailure(
                run_id=run.id,
                pair_id=result.job.pair_id,
                judge_id=run.judge_id,
                reason=(outcome.error or "no rating")[:2000],
            )
        )
        return
    if result.cached:
        run.cached += 1
    else:
        run.judged += 1
    values: dict[str, Any] = {
        "run_id": run.id,
        "rating": outcome.rating,
        "unrateable": False,
        "explanation": outcome.explanation,
        "model": plan.model,
        "prompt_sha256": plan.prompt_hash,
        "temperature": plan.config.temperature,
        "tokens_in": outcome.tokens_in,
        "tokens_out": outcome.tokens_out,
        "latency_ms": outcome.latency_ms,
        "cost_usd": 0.0 if result.cached else outcome.cost_usd,
        "cached": result.cached,
        "raw_reply": outcome.raw_reply,
        "updated_at": utcnow(),
    }
    if row is None:
        row = JudgeJudgement(
            book_id=run.book_id, pair_id=result.job.pair_id, judge_id=run.judge_id, **values
        )
        session.add(row)
    else:
        for name, value in values.items():
            setattr(row, name, value)


def _cache(session: Session, owner_id: int, results: dict[str, Result]) -> None:
    if not results:
        return
    known = set(
        session.scalars(select(JudgeCacheEntry.key).where(JudgeCacheEntry.key.in_(list(results))))
    )
    for key, result in results.items():
        if key in known:
            continue
        outcome = result.outcome
        session.add(
            JudgeCacheEntry(
                key=key,
                owner_id=owner_id,
                rating=outcome.rating,
                explanation=outcome.explanation,
                tokens_in=outcome.tokens_in,
                tokens_out=outcome.tokens_out,
                raw_reply=outcome.raw_reply,
            )
        )


def finish(*, session: Session, run_id: int, status: str, message: str | None) -> None:
    """Record how a run ended (a run cancelled meanwhile stays cancelled).

    Calls cut short (by a cancel) may have been billed: what they reserved counts as spent.
    """
    run = session.get(JudgeRun, run_id, with_for_update=True)
    if run is None:
        return
    _charge_reserved(run)
    if run.cancel_requested:
        run.message = run.message or "Cancelled."
        run.status = "cancelled"
        run.finished_at = run.finished_at or utcnow()
        session.commit()
        return
    if status == "finished" and run.failed and not run.judged and not run.cached:
        status = "failed"
        message = message or "Every pair failed; see the failures."
    run.status, run.message = status, message
    run.finished_at = utcnow() if status != "paused" else None
    session.commit()

"""What a judge run's runner calls, each in its own short transaction: start, store, finish."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.judges import service as judges
from app.judges.client import JudgeConfig, Outcome
from app.judges.prompt import prompt_sha256
from app.judges.runs import PairJob, cached_entries, pair_jobs
from app.models import Book, Judge, JudgeCacheEntry, JudgeFailure, JudgeJudgement, JudgeRun
from app.models.base import utcnow

__all__ = ["Result", "RunPlan", "finish", "start", "store"]


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
    if run is None or run.status not in ("queued", "running"):
        return None
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
class Result:
    """One pair's outcome, as the runner hands it to :func:`store`."""

    job: PairJob
    outcome: Outcome
    cached: bool


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
    """Record how a run ended (a run cancelled meanwhile stays cancelled)."""
    run = session.get(JudgeRun, run_id, with_for_update=True)
    if run is None:
        return
    if run.cancel_requested:
        status, message = "cancelled", "Cancelled."
    if status == "finished" and run.failed and not run.judged and not run.cached:
        status = "failed"
        message = message or "Every pair failed; see the failures."
    run.status, run.message = status, message
    run.finished_at = utcnow() if status != "paused" else None
    session.commit()

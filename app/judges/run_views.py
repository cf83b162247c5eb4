"""Reading judge runs: a run's public view, its failures, and the judgements of a book."""

from __future__ import annotations

from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.judges import service as judges
from app.judges.runs import is_stale
from app.judges.schemas import FailureRead, JudgeJudgementRead, JudgeRunRead, PairsChoice
from app.models import Judge, JudgeFailure, JudgeJudgement, JudgeRun

FAILURES_SHOWN = 500


def failures(*, session: Session, run: JudgeRun) -> list[FailureRead]:
    """Return the run's failures (the first few hundred), by pair."""
    stmt = (
        select(JudgeFailure.pair_id, JudgeFailure.reason)
        .where(JudgeFailure.run_id == run.id)
        .order_by(JudgeFailure.pair_id)
        .limit(FAILURES_SHOWN)
    )
    return [FailureRead(pair_id=p, reason=r) for p, r in session.execute(stmt)]


def to_read(
    *,
    session: Session,
    run: JudgeRun,
    with_failures: bool = False,
    judge_name: str | None = None,
    judge_priced: bool | None = None,
) -> JudgeRunRead:
    """Return the public view of a run (with its failures when asked)."""
    if judge_name is None or judge_priced is None:
        judge = session.get(Judge, run.judge_id)
        judge_name = judge_name or (judge.name if judge is not None else f"judge {run.judge_id}")
        judge_priced = judge is not None and judges.is_priced(judge)
    return JudgeRunRead(
        id=run.id,
        book_id=run.book_id,
        judge_id=run.judge_id,
        judge_name=judge_name,
        status=run.status,
        pairs=cast(PairsChoice, run.pairs_mode),
        pairs_total=run.pairs_total,
        judged=run.judged,
        cached=run.cached,
        failed=run.failed,
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
        cost_usd=round(run.cost_usd, 6),
        budget_usd=run.budget_usd,
        budget_tokens=run.budget_tokens,
        message=run.message,
        created_at=run.created_at,
        finished_at=run.finished_at,
        resumable=run.status == "paused" or is_stale(run),
        # A cost already counted stays known when the judge's prices are removed later.
        priced=judge_priced or run.cost_usd > 0,
        failures=failures(session=session, run=run) if with_failures else None,
        agent=run.agent,
    )


def judgements_by_pair(*, session: Session, book_id: int) -> dict[int, list[JudgeJudgementRead]]:
    """Return the judges' judgements of a book's pairs, by pair id (judge id order)."""
    stmt = (
        select(JudgeJudgement)
        .where(JudgeJudgement.book_id == book_id)
        .order_by(JudgeJudgement.pair_id, JudgeJudgement.judge_id)
    )
    found: dict[int, list[JudgeJudgementRead]] = {}
    for row in session.scalars(stmt):
        found.setdefault(row.pair_id, []).append(JudgeJudgementRead.model_validate(row))
    return found

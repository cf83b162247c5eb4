"""Judge runs: which pairs, what it would cost, start, follow, cancel, and their judgements.

A run fixes its pairs when it is created (``pair_ids``); a pair is done once the run has a
judgement or a failure for it, so a run resumed after a restart asks only about the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.errors import Conflict, Invalid, NotFound
from app.judges import service as judges
from app.judges.judge import estimate_tokens
from app.judges.prompt import cache_key, prompt_sha256, render
from app.judges.providers import SYSTEM_PROMPT
from app.judges.schemas import (
    FailureRead,
    JudgeJudgementRead,
    JudgeRunCreate,
    JudgeRunEstimate,
    JudgeRunRead,
    PairsChoice,
)
from app.models import (
    Book,
    Judge,
    JudgeCacheEntry,
    JudgeFailure,
    JudgeJudgement,
    JudgeRun,
    Pair,
    User,
)
from app.models.base import utcnow

ACTIVE = ("queued", "running")
# What an answer of {"rating", "explanation"} usually costs, for the estimate only (the
# budget reserves max_output_tokens for every call).
TYPICAL_OUTPUT_TOKENS = 80
WIRE_OVERHEAD_TOKENS = 20
FAILURES_SHOWN = 500
# A running run whose heartbeat is this old was left by a process that stopped.
STALE_S = 60


@dataclass(frozen=True)
class PairJob:
    """One pair to ask about: its prompt and its cache key."""

    pair_id: int
    prompt: str
    key: str


def select_pair_ids(
    *, session: Session, book: Book, judge: Judge, pairs: str, limit: int | None
) -> list[int]:
    """Return the ids of the book's pairs a run takes: all, the unjudged or the failed."""
    stmt = select(Pair.id).where(Pair.book_id == book.id)
    rated = select(JudgeJudgement.pair_id).where(
        JudgeJudgement.judge_id == judge.id,
        JudgeJudgement.book_id == book.id,
        JudgeJudgement.rating.is_not(None),
    )
    if pairs == "unjudged":
        stmt = stmt.where(Pair.id.not_in(rated))
    elif pairs == "failed":
        failed = select(JudgeFailure.pair_id).where(JudgeFailure.judge_id == judge.id)
        stmt = stmt.where(Pair.id.in_(failed), Pair.id.not_in(rated))
    stmt = stmt.order_by(Pair.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(session.scalars(stmt))


def pair_jobs(
    *, session: Session, book: Book, judge: Judge, pair_ids: Sequence[int]
) -> list[PairJob]:
    """Return the prompt and cache key of each of these pairs, in the order given."""
    template = judges.template_of(judge)
    prompt_hash = prompt_sha256(template)
    found: dict[int, Pair] = {}
    ids = list(pair_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update({p.id: p for p in session.scalars(select(Pair).where(Pair.id.in_(chunk)))})
    jobs = []
    for pair_id in ids:
        pair = found.get(pair_id)
        if pair is None:  # removed from the book since the run began
            continue
        prompt = render(
            template,
            query=pair.query_text,
            information_need=pair.information_need,
            doc_id=pair.doc_id,
            fields=pair.fields or {},
            scale=book.scale,
            labels=book.scale_labels,
        )
        key = cache_key(
            owner_id=judge.owner_id,
            provider=judge.provider,
            base_url=judge.base_url,
            model=judge.model,
            prompt_hash=prompt_hash,
            query=pair.query_text,
            information_need=pair.information_need,
            doc_id=pair.doc_id,
            fields=pair.fields or {},
            scale=book.scale,
        )
        jobs.append(PairJob(pair_id, prompt, key))
    return jobs


def cached_entries(
    *, session: Session, owner_id: int, keys: Sequence[str]
) -> dict[str, JudgeCacheEntry]:
    """Return the cache entries among these keys that the judge's owner's judges made."""
    found: dict[str, JudgeCacheEntry] = {}
    keys = list(keys)
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        stmt = select(JudgeCacheEntry).where(
            JudgeCacheEntry.key.in_(chunk), JudgeCacheEntry.owner_id == owner_id
        )
        found.update({e.key: e for e in session.scalars(stmt)})
    return found


def prompt_tokens(prompt: str) -> int:
    """Return the estimated input tokens of one call (system prompt and wire overhead too)."""
    return estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(prompt) + WIRE_OVERHEAD_TOKENS


def estimate(
    *, session: Session, book: Book, judge: Judge, body: JudgeRunCreate
) -> JudgeRunEstimate:
    """Return what a run would cost: pairs, calls (cached pairs need none), tokens, USD."""
    ids = select_pair_ids(
        session=session, book=book, judge=judge, pairs=body.pairs, limit=body.limit
    )
    jobs = pair_jobs(session=session, book=book, judge=judge, pair_ids=ids)
    cached = cached_entries(session=session, owner_id=judge.owner_id, keys=[j.key for j in jobs])
    calls = [j for j in jobs if j.key not in cached]
    tokens_in = sum(prompt_tokens(j.prompt) for j in calls)
    tokens_out = len(calls) * min(judge.max_output_tokens, TYPICAL_OUTPUT_TOKENS)
    cost = judges.config_of(judge).cost(tokens_in, tokens_out) if judges.is_priced(judge) else None
    return JudgeRunEstimate(
        pairs=len(jobs),
        calls=len(calls),
        cached=len(jobs) - len(calls),
        tokens_in_estimate=tokens_in,
        tokens_out_estimate=tokens_out,
        cost_usd_estimate=None if cost is None else round(cost, 6),
    )


def create_run(
    *, session: Session, book: Book, judge: Judge, user: User, body: JudgeRunCreate
) -> JudgeRun:
    """Create a queued run over the chosen pairs (409 while the judge has one under way).

    One active run per judge: its rate limits are then held by one process, whichever.
    """
    if body.budget_usd is not None and not judges.is_priced(judge):
        raise Invalid("budget_usd", "A budget in USD needs the judge's prices per million tokens.")
    judges.config_of(judge)  # secrets readable, or 409 now rather than a run of failures
    active = session.scalar(
        select(func.count())
        .select_from(JudgeRun)
        .where(JudgeRun.judge_id == judge.id, JudgeRun.status.in_(ACTIVE))
    )
    if active:
        raise Conflict(BUSY)
    ids = select_pair_ids(
        session=session, book=book, judge=judge, pairs=body.pairs, limit=body.limit
    )
    run = JudgeRun(
        book_id=book.id,
        judge_id=judge.id,
        user_id=user.id,
        status="queued",
        pairs_mode=body.pairs,
        pair_ids=ids,
        pairs_total=len(ids),
        budget_usd=body.budget_usd,
        budget_tokens=body.budget_tokens,
    )
    session.add(run)
    _flush_or_conflict(session)
    return run


BUSY = "This judge already has a run under way; wait for it or cancel it."


def _flush_or_conflict(session: Session) -> None:
    """Flush; a second run under way for the judge (the partial unique index) is a 409.

    The count before is only the usual answer: concurrent starts all pass it, and the
    index lets one of them in.
    """
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise Conflict(BUSY) from None


def get_run(*, session: Session, book: Book, run_id: int) -> JudgeRun:
    """Return one of the book's judge runs, else raise NotFound."""
    run = session.get(JudgeRun, run_id) if 1 <= run_id <= 2**31 - 1 else None
    if run is None or run.book_id != book.id:
        raise NotFound(f"No judge run with id {run_id} in this book.")
    return run


def list_runs(*, session: Session, book: Book) -> list[JudgeRun]:
    """Return the book's judge runs, newest first."""
    stmt = select(JudgeRun).where(JudgeRun.book_id == book.id).order_by(JudgeRun.id.desc())
    return list(session.scalars(stmt))


def cancel_run(*, session: Session, run: JudgeRun) -> JudgeRun:
    """Cancel a queued, running or paused run at once, and answer it as cancelled.

    The request is stored first, in one conditional UPDATE: a run that ended meanwhile
    keeps its end, and from then on nothing re-queues the run (the stale-run resumer skips
    it) and its executing process sends no new call. That process stops waiting for the
    calls under way at its next look at the run (every half second); what they already
    cost is still recorded.
    """
    session.execute(
        update(JudgeRun)
        .where(JudgeRun.id == run.id, JudgeRun.status.in_((*ACTIVE, "paused")))
        .values(
            cancel_requested=True, status="cancelled", message="Cancelled.", finished_at=utcnow()
        )
        .execution_options(synchronize_session=False)
    )
    session.flush()
    session.refresh(run)
    return run


def is_stale(run: JudgeRun, *, now: datetime | None = None) -> bool:
    """Return whether a running run's process has gone silent (stopped or restarted)."""
    beat = run.heartbeat_at or run.created_at
    if beat.tzinfo is None:  # SQLite hands back naive datetimes
        beat = beat.replace(tzinfo=UTC)
    return run.status == "running" and (now or utcnow()) - beat > timedelta(seconds=STALE_S)


def resume_run(*, session: Session, run: JudgeRun) -> JudgeRun:
    """Put a paused run, or one whose process is gone, back in the queue.

    It asks only about the pairs it has not done yet.
    """
    if run.cancel_requested or (run.status != "paused" and not is_stale(run)):
        raise Conflict(
            f"Only a paused run, or a running one whose process stopped {STALE_S} s ago, can "
            f"be resumed; this one is {run.status}."
        )
    active = session.scalar(
        select(func.count())
        .select_from(JudgeRun)
        .where(
            JudgeRun.judge_id == run.judge_id,
            JudgeRun.status.in_(ACTIVE),
            JudgeRun.id != run.id,
        )
    )
    if active:
        raise Conflict(BUSY)
    run.status, run.message = "queued", None
    _flush_or_conflict(session)
    return run


def resume_stale_runs(*, session: Session, now: datetime | None = None) -> list[int]:
    """Put back in the queue every running run whose process went silent; return their ids.

    Called on every tick of whoever fires schedules (a worker's periodic job with the
    PostgreSQL queue, the server's ticker with SQLite), so a run left by a stopped or
    killed process goes on by itself, asking only about the pairs it had not done. The
    conditional UPDATE makes two ticks that race resume each run once.
    """
    limit = (now or utcnow()) - timedelta(seconds=STALE_S)
    # A run whose cancel was asked is never put back (cancel also ends it; this holds if a
    # process wrote "running" over it anyway).
    candidates = session.scalars(
        select(JudgeRun.id).where(
            JudgeRun.status == "running",
            JudgeRun.heartbeat_at < limit,
            JudgeRun.cancel_requested.is_(False),
        )
    ).all()
    resumed: list[int] = []
    for run_id in candidates:
        claimed = session.execute(
            update(JudgeRun)
            .where(
                JudgeRun.id == run_id,
                JudgeRun.status == "running",
                JudgeRun.heartbeat_at < limit,
                JudgeRun.cancel_requested.is_(False),
            )
            .values(status="queued", message=None)
            .execution_options(synchronize_session=False)
        )
        if getattr(claimed, "rowcount", 0) == 1:
            resumed.append(run_id)
    session.commit()
    return resumed


def owner_has_room(*, session: Session, run_id: int, per_user: int) -> bool:
    """Return whether the run's user has fewer than ``per_user`` other judge runs executing.

    A worker asks before executing a run, so that one user's runs cannot hold every slot.
    A run that is no longer to be executed has room: starting it ends at once.
    """
    run = session.get(JudgeRun, run_id)
    if run is None or run.user_id is None or run.status not in ACTIVE:
        return True
    executing = session.scalar(
        select(func.count())
        .select_from(JudgeRun)
        .where(
            JudgeRun.user_id == run.user_id,
            JudgeRun.status == "running",
            JudgeRun.id != run.id,
            # A run whose process stopped holds no slot (the resumer queues it again).
            JudgeRun.heartbeat_at >= utcnow() - timedelta(seconds=STALE_S),
        )
    )
    return (executing or 0) < per_user


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

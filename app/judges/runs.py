"""Judge runs: start, find, cancel and resume them, and keep one under way per judge.

A run fixes its pairs when it is created (``pair_ids``, see ``run_pairs``); a pair is done
once the run has a judgement or a failure for it, so a run resumed after a restart asks
only about the rest. Its public view is in ``run_views``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.errors import Conflict, Invalid, NotFound
from app.judges import service as judges
from app.judges.run_pairs import select_pair_ids
from app.judges.schemas import JudgeRunCreate
from app.models import Book, Judge, JudgeRun, User
from app.models.base import utcnow

ACTIVE = ("queued", "running")
# A running run whose heartbeat is this old was left by a process that stopped.
STALE_S = 60


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

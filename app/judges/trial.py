"""Trying a judge on a few of a book's pairs: prompt, reply, rating and cost.

No rating is written; the trial's result is kept (``keep``) for the page that shows it, so
that the form answers with a redirect and a reload shows the result without a new call.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app import access
from app.judges import run_pairs
from app.judges import service as judges
from app.judges.client import JudgeClient
from app.judges.judge import JudgeConfig
from app.judges.run_pairs import PairJob
from app.judges.schemas import JudgeTestItem, JudgeTestRead
from app.judges.titles import pair_title, title_fields
from app.models import Book, Judge, JudgeTrial, Pair, User

KEPT_TRIALS = 5  # per user and judge: older results are deleted when a new one is kept


@dataclass(frozen=True)
class Picked:
    """One pair of a trial as plain data (read before any call), with its prompt."""

    pair_id: int
    query_text: str
    doc_id: str
    doc_title: str | None
    job: PairJob


def sample(
    *, session: Session, book: Book, judge: Judge, n: int, seed: int | None = None
) -> list[Picked]:
    """Return up to ``n`` of the book's pairs, picked at random, with their prompts."""
    ids = list(session.scalars(select(Pair.id).where(Pair.book_id == book.id).order_by(Pair.id)))
    chosen = sorted(random.Random(seed).sample(ids, min(n, len(ids))))
    jobs = run_pairs.pair_jobs(session=session, book=book, judge=judge, pair_ids=chosen)
    pairs = {p.id: p for p in session.scalars(select(Pair).where(Pair.id.in_(chosen)))}
    names = title_fields(session=session, book_id=book.id)
    return [
        Picked(
            pair_id=j.pair_id,
            query_text=pairs[j.pair_id].query_text,
            doc_id=pairs[j.pair_id].doc_id,
            doc_title=pair_title(pairs[j.pair_id].fields, names),
            job=j,
        )
        for j in jobs
    ]


async def try_judge(
    *,
    client: JudgeClient,
    config: JudgeConfig,
    scale: list[float],
    picked: list[Picked],
    judge_id: int,
    book_id: int,
) -> JudgeTestRead:
    """Ask the judge about each picked pair (at once, within its limits) and report each answer.

    ``client`` is the process's judge client: the judge's limits hold across trials and
    runs. A pair that gets no turn within ``timeout_s`` says so instead of waiting longer.
    """
    outcomes = await asyncio.gather(
        *(
            client.judge(config, p.job.prompt, scale, attempts=2, turn_wait_s=config.timeout_s)
            for p in picked
        )
    )
    items = [
        JudgeTestItem(
            pair_id=p.pair_id,
            query_text=p.query_text,
            doc_id=p.doc_id,
            doc_title=p.doc_title,
            prompt=p.job.prompt,
            reply=outcome.raw_reply,
            rating=outcome.rating,
            explanation=outcome.explanation,
            error=outcome.error,
            tokens_in=outcome.tokens_in,
            tokens_out=outcome.tokens_out,
            cost_usd=round(outcome.cost_usd, 6),
            latency_ms=round(outcome.latency_ms, 1),
        )
        for p, outcome in zip(picked, outcomes, strict=True)
    ]
    return JudgeTestRead(judge_id=judge_id, book_id=book_id, priced=config.priced, items=items)


def prepare(
    *, session: Session, user: User, book_id: int, judge: Judge, n: int
) -> tuple[JudgeConfig, list[float], list[Picked]]:
    """Return what a trial on one of the user's books needs from the database (read before
    any call is made); another user's book is NotFound."""
    book = access.visible_book(session=session, user=user, book_id=book_id)
    config = judges.config_of(judge)
    picked = sample(session=session, book=book, judge=judge, n=n)
    return config, [float(v) for v in book.scale], picked


def keep(*, session: Session, user: User, judge: Judge, result: JudgeTestRead) -> int:
    """Store a trial's result for the user's page; return its id (the user's older trials
    of the judge beyond the latest ``KEPT_TRIALS`` are deleted)."""
    trial = JudgeTrial(judge_id=judge.id, user_id=user.id, result=result.model_dump(mode="json"))
    session.add(trial)
    session.flush()
    older = (
        select(JudgeTrial.id)
        .where(JudgeTrial.judge_id == judge.id, JudgeTrial.user_id == user.id)
        .order_by(JudgeTrial.id.desc())
        .offset(KEPT_TRIALS)
    )
    stale = list(session.scalars(older))
    if stale:
        session.execute(delete(JudgeTrial).where(JudgeTrial.id.in_(stale)))
    session.flush()
    return trial.id


def kept(*, session: Session, user: User, judge: Judge, trial_id: int) -> JudgeTestRead | None:
    """Return the user's kept trial of the judge, or None (another's, deleted, unknown)."""
    trial = session.get(JudgeTrial, trial_id) if access.valid_id(trial_id) else None
    if trial is None or trial.user_id != user.id or trial.judge_id != judge.id:
        return None
    return JudgeTestRead.model_validate(trial.result)

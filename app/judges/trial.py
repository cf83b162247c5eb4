"""Trying a judge on a few of a book's pairs: prompt, reply, rating and cost, nothing written."""

from __future__ import annotations

import asyncio
import random

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import access
from app.judges import runs
from app.judges import service as judges
from app.judges.client import JudgeClient, JudgeConfig
from app.judges.runs import PairJob
from app.judges.schemas import JudgeTestItem, JudgeTestRead
from app.models import Book, Judge, Pair, User


def sample(
    *, session: Session, book: Book, judge: Judge, n: int, seed: int | None = None
) -> list[tuple[Pair, PairJob]]:
    """Return up to ``n`` of the book's pairs, picked at random, with their prompts."""
    ids = list(session.scalars(select(Pair.id).where(Pair.book_id == book.id).order_by(Pair.id)))
    chosen = sorted(random.Random(seed).sample(ids, min(n, len(ids))))
    jobs = runs.pair_jobs(session=session, book=book, judge=judge, pair_ids=chosen)
    pairs = {p.id: p for p in session.scalars(select(Pair).where(Pair.id.in_(chosen)))}
    return [(pairs[j.pair_id], j) for j in jobs]


async def try_judge(
    *,
    client: JudgeClient,
    config: JudgeConfig,
    scale: list[float],
    picked: list[tuple[Pair, PairJob]],
    judge_id: int,
    book_id: int,
) -> JudgeTestRead:
    """Ask the judge about each picked pair (at once, within its limits) and report each answer.

    ``client`` is the process's judge client: the judge's limits hold across trials and
    runs. A pair that gets no turn within ``timeout_s`` says so instead of waiting longer.
    """
    outcomes = await asyncio.gather(
        *(
            client.judge(config, job.prompt, scale, attempts=2, turn_wait_s=config.timeout_s)
            for _pair, job in picked
        )
    )
    items = [
        JudgeTestItem(
            pair_id=pair.id,
            query_text=pair.query_text,
            doc_id=pair.doc_id,
            prompt=job.prompt,
            reply=outcome.raw_reply,
            rating=outcome.rating,
            explanation=outcome.explanation,
            error=outcome.error,
            tokens_in=outcome.tokens_in,
            tokens_out=outcome.tokens_out,
            cost_usd=round(outcome.cost_usd, 6),
            latency_ms=round(outcome.latency_ms, 1),
        )
        for (pair, job), outcome in zip(picked, outcomes, strict=True)
    ]
    return JudgeTestRead(judge_id=judge_id, book_id=book_id, items=items)


def prepare(
    *, session: Session, user: User, book_id: int, judge: Judge, n: int
) -> tuple[JudgeConfig, list[float], list[tuple[Pair, PairJob]]]:
    """Return what a trial on one of the user's books needs from the database (read before
    any call is made); another user's book is NotFound."""
    book = access.visible_book(session=session, user=user, book_id=book_id)
    config = judges.config_of(judge)
    picked = sample(session=session, book=book, judge=judge, n=n)
    return config, [float(v) for v in book.scale], picked

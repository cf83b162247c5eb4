"""Which pairs a judge run takes, their prompts and cache keys, and what the run would cost.

A run fixes its pairs when it is created; each pair becomes a ``PairJob`` (its prompt and
cache key) when the run executes, and a pair whose key is cached needs no call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.judges import service as judges
from app.judges.judge import estimate_tokens
from app.judges.prompt import cache_key, prompt_sha256, render
from app.judges.providers import SYSTEM_PROMPT
from app.judges.schemas import JudgeRunCreate, JudgeRunEstimate
from app.models import Book, Judge, JudgeCacheEntry, JudgeFailure, JudgeJudgement, Pair

# What an answer of {"rating", "explanation"} usually costs, for the estimate only (the
# budget reserves max_output_tokens for every call).
TYPICAL_OUTPUT_TOKENS = 80
WIRE_OVERHEAD_TOKENS = 20


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

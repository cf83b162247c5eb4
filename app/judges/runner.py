"""Executing a judge run: ask about every pending pair, within limits, budget and reason.

Up to the judge's max concurrency pairs are asked about at once. Before each call the
budget is checked against what was spent plus what calls under way may still spend (their
prompt's tokens, counted generously, and max_output_tokens): the run stops before it could
exceed the budget, never after. That worst case is written to the run before the call is
sent (``run_store.reserve``, which also refuses once a cancel was asked), and each result
is written as soon as the previous write is done (the results that came meanwhile go
together), so a killed process leaves at most its calls under way unrecorded, and those
count at their worst case. Every write also reads whether a cancel was asked for: then the
calls under way are abandoned at once. Ten failures in a row pause the run with the last
reason, instead of paying for more of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.judges import run_store
from app.judges.client import JudgeClient
from app.judges.judge import Outcome
from app.judges.run_pairs import PairJob
from app.judges.run_store import Reservation, Result, RunPlan

__all__ = ["FAILURES_IN_A_ROW", "execute_judge_run"]

log = logging.getLogger(__name__)

FAILURES_IN_A_ROW = 10
FLUSH_EVERY_S = 0.5


@dataclass
class _State:
    """What the run's tasks share: money spent and reserved, and why it stopped."""

    budget_usd: float | None
    budget_tokens: int | None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    reserved_usd: float = 0.0
    reserved_tokens: int = 0
    failures_in_a_row: int = 0
    stop_status: str | None = None
    stop_message: str | None = None
    pending: list[Result] = field(default_factory=list)

    def stop(self, status: str, message: str) -> None:
        if self.stop_status is None:
            self.stop_status, self.stop_message = status, message


def _reserve_tokens(plan: RunPlan, job: PairJob) -> int:
    # Characters / 2 is above the token count of any ordinary text: the reservation errs high.
    return (len(job.prompt) + 400) // 2 + plan.config.max_output_tokens


def _admit(state: _State, plan: RunPlan, job: PairJob) -> Reservation | None:
    """Reserve this call's worst case against the budget; None (and stop) when it won't fit."""
    tokens = _reserve_tokens(plan, job)
    usd = plan.config.cost(tokens - plan.config.max_output_tokens, plan.config.max_output_tokens)
    if state.budget_tokens is not None and (
        state.spent_tokens + state.reserved_tokens + tokens > state.budget_tokens
    ):
        state.stop(
            "paused",
            f"Stopped before exceeding the budget of {state.budget_tokens} tokens "
            f"({state.spent_tokens} spent).",
        )
        return None
    if state.budget_usd is not None and (
        state.spent_usd + state.reserved_usd + usd > state.budget_usd
    ):
        state.stop(
            "paused",
            f"Stopped before exceeding the budget of ${state.budget_usd:g} "
            f"(${state.spent_usd:.4f} spent).",
        )
        return None
    state.reserved_tokens += tokens
    state.reserved_usd += usd
    return Reservation(tokens - plan.config.max_output_tokens, plan.config.max_output_tokens, usd)


async def _ask(
    client: JudgeClient,
    plan: RunPlan,
    job: PairJob,
    state: _State,
    factory: sessionmaker[Session],
) -> Result | None:
    hit = plan.cache.get(job.key)
    if hit is not None:
        rating, explanation, tokens_in, tokens_out, raw = hit
        outcome = Outcome(rating, explanation, None, tokens_in, tokens_out, 0.0, 0.0, raw)
        return Result(job, outcome, cached=True)
    reserved = _admit(state, plan, job)
    if reserved is None:
        return None
    try:
        if not await asyncio.to_thread(_reserve, factory, plan.run_id, reserved):
            state.stop("cancelled", "Cancelled.")
            return None
        outcome = await client.judge(plan.config, job.prompt, plan.scale)
    finally:
        state.reserved_tokens -= reserved.tokens_in + reserved.tokens_out
        state.reserved_usd -= reserved.usd
    state.spent_tokens += outcome.tokens_in + outcome.tokens_out
    state.spent_usd += outcome.cost_usd
    if outcome.rating is None:
        state.failures_in_a_row += 1
        if state.failures_in_a_row >= FAILURES_IN_A_ROW:
            state.stop(
                "paused",
                f"Paused after {FAILURES_IN_A_ROW} failures in a row; the last: {outcome.error}",
            )
    else:
        state.failures_in_a_row = 0
    return Result(job, outcome, cached=False, reserved=reserved)


async def execute_judge_run(
    *, session_factory: sessionmaker[Session], run_id: int, client: JudgeClient
) -> None:
    """Execute a queued (or resumed) judge run to its end, pause or cancel."""
    plan = await asyncio.to_thread(_start, session_factory, run_id)
    if plan is None:
        return
    run = await asyncio.to_thread(_budget, session_factory, run_id)
    state = _State(budget_usd=run[0], budget_tokens=run[1], spent_usd=run[2], spent_tokens=run[3])
    try:
        await _work(client, plan, state, session_factory)
    except Exception as exc:  # a bug or the database gone: the run says so and stops
        log.exception("judge run %s failed", run_id)
        state.stop("failed", f"The run stopped on an internal error: {type(exc).__name__}")
    finally:
        cancelled = await asyncio.to_thread(_store, session_factory, plan, list(state.pending))
        if cancelled:
            state.stop("cancelled", "Cancelled.")
    await asyncio.to_thread(
        _finish, session_factory, run_id, state.stop_status or "finished", state.stop_message
    )


async def _work(
    client: JudgeClient, plan: RunPlan, state: _State, factory: sessionmaker[Session]
) -> None:
    jobs = iter(plan.jobs)
    wake = asyncio.Event()
    asking: list[asyncio.Task[None]] = []

    async def worker() -> None:
        while state.stop_status is None:
            job = next(jobs, None)
            if job is None:
                return
            result = await _ask(client, plan, job, state, factory)
            if result is not None:
                state.pending.append(result)
                wake.set()  # the writer stores it now; this worker asks about the next pair

    async def flush() -> None:
        batch, state.pending = state.pending, []
        cancelled = await asyncio.to_thread(_store, factory, plan, batch)
        if cancelled:
            state.stop("cancelled", "Cancelled.")
            for task in asking:  # stop waiting for calls under way (and for limits)
                task.cancel()

    workers_done = False

    async def writer() -> None:
        # One writer, off the workers' path: results are stored while the next calls go on.
        # It is never cancelled mid-write: it ends by itself after the workers' last results.
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FLUSH_EVERY_S):
                    await wake.wait()
            wake.clear()
            last = workers_done
            await flush()
            if last:
                return

    writing = asyncio.create_task(writer())
    asking.extend(asyncio.create_task(worker()) for _ in range(max(1, plan.config.max_concurrency)))
    try:
        ended = await asyncio.gather(*asking, return_exceptions=True)
    finally:
        workers_done = True
        wake.set()
        await writing
    for outcome in ended:  # a worker cancelled by a cancel is fine; a bug is not
        if isinstance(outcome, Exception):
            raise outcome


def _start(factory: sessionmaker[Session], run_id: int) -> RunPlan | None:
    with session_scope(factory) as session:
        return run_store.start(session=session, run_id=run_id)


def _budget(
    factory: sessionmaker[Session], run_id: int
) -> tuple[float | None, int | None, float, int]:
    from app.models import JudgeRun

    with session_scope(factory) as session:
        run = session.get(JudgeRun, run_id)
        assert run is not None
        return run.budget_usd, run.budget_tokens, run.cost_usd, run.tokens_in + run.tokens_out


def _reserve(factory: sessionmaker[Session], run_id: int, reservation: Reservation) -> bool:
    with session_scope(factory) as session:
        return run_store.reserve(session=session, run_id=run_id, reservation=reservation)


def _store(factory: sessionmaker[Session], plan: RunPlan, batch: Sequence[Result]) -> bool:
    # Also with no results: the heartbeat, and a cancel noticed while calls are slow.
    with session_scope(factory) as session:
        return run_store.store(session=session, plan=plan, results=batch)


def _finish(factory: sessionmaker[Session], run_id: int, status: str, message: str | None) -> None:
    with session_scope(factory) as session:
        run_store.finish(session=session, run_id=run_id, status=status, message=message)

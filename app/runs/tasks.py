"""The runs' jobs: a queued run's chunks, executed by workers (``relevo worker``)."""

from __future__ import annotations

from app.jobs.registry import Job, Resource, register_task
from app.runs.queue import CHUNK_ATTEMPTS, CHUNK_TASK
from app.runs.runner import execute_chunk
from app.search import SearchClient

__all__ = ["SEARCH", "register", "run_chunk"]

# The worker's search client (its engines' limits shared with every other worker).
SEARCH: Resource[SearchClient] = Resource("search client")


async def run_chunk(job: Job, *, run_id: int, chunk: int, query_ids: list[int]) -> None:
    """Execute one chunk of a run's queries and store its results."""
    await execute_chunk(
        session_factory=job.session_factory,
        run_id=run_id,
        chunk=chunk,
        query_ids=query_ids,
        search=job.resources.get(SEARCH),
    )


def register() -> None:
    """Register the runs' tasks with the job kernel."""
    register_task(CHUNK_TASK, run_chunk, attempts=CHUNK_ATTEMPTS)

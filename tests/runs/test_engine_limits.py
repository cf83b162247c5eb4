"""Engine limits shared through PostgreSQL: two processes' worth of requests never exceed an
endpoint's max_concurrency, requests that wait queue locally behind one poller instead of
each asking the database again, and a slot serves a process's waiting requests in turn
before it goes back to the database."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import create_engine

from app.db import migrate
from app.jobs.queue import libpq_url
from app.runs.engine_limits import HAND_ON, PARK_S, PostgresEngineLimits, engine_key
from app.search.types import EndpointConfig
from app.vocabulary import Engine
from tests.fixtures.database import _postgres_database

ENDPOINT = EndpointConfig(
    engine=Engine.OPENSEARCH, url="http://127.0.0.1:9/movies", max_concurrency=2
)


@pytest.fixture
def limits_db() -> Iterator[str]:
    """A migrated PostgreSQL database of this test's own."""
    for url in _postgres_database():
        engine = create_engine(url)
        try:
            migrate(engine)
        finally:
            engine.dispose()
        yield url


class CountingLimits(PostgresEngineLimits):
    """Counts the database polls made while this process already has requests waiting."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(pool)
        self.polls_in_flight = 0
        self.most_polls_in_flight = 0
        self.polls = 0
        self.takes = 0  # slots taken from the database
        self.gives = 0  # slots given back to it

    async def _give(self, key: str, slot: int, holder: str) -> None:
        self.gives += 1
        await super()._give(key, slot, holder)

    async def _try_take(self, key: str, endpoint: EndpointConfig) -> tuple[int, str] | None:
        line = self._lines.get(key)
        waiting = line is not None and line.first_waiting() is not None
        if waiting:
            self.polls += 1
            self.polls_in_flight += 1
            self.most_polls_in_flight = max(self.most_polls_in_flight, self.polls_in_flight)
        try:
            taken = await super()._try_take(key, endpoint)
            self.takes += taken is not None
            return taken
        finally:
            if waiting:
                self.polls_in_flight -= 1


async def _hammer(url: str) -> tuple[int, list[CountingLimits]]:
    in_flight = most = 0
    done = 0

    async def request(limits: PostgresEngineLimits) -> None:
        nonlocal in_flight, most, done
        async with limits.slot(ENDPOINT):
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.02)
            in_flight -= 1
        done += 1

    pools = [
        AsyncConnectionPool(libpq_url(url), min_size=1, max_size=4, open=False,
                            kwargs={"autocommit": True})
        for _ in range(2)
    ]  # fmt: skip
    processes: list[CountingLimits] = []
    try:
        for pool in pools:
            await pool.open()
            processes.append(CountingLimits(pool))
        # Twelve requests from each of two "processes" on an engine that takes two at once.
        await asyncio.wait_for(
            asyncio.gather(*(request(p) for p in processes for _ in range(12))), timeout=60
        )
        # A request cancelled while waiting leaves nothing held.
        async with processes[1].slot(ENDPOINT), processes[1].slot(ENDPOINT):
            waiting = asyncio.create_task(request(processes[0]))
            await asyncio.sleep(0.05)
            assert not waiting.done()  # both slots are taken: it waits in line
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
        async with processes[0].slot(ENDPOINT), processes[1].slot(ENDPOINT):
            pass  # both slots are free again
    finally:
        for limits in processes:
            await limits.aclose()
        for pool in pools:
            await pool.close()
    assert done == 24
    return most, processes


def test_two_processes_share_the_slots_and_poll_once_per_engine(limits_db: str) -> None:
    most, processes = asyncio.run(_hammer(limits_db))
    assert most == 2  # never more than max_concurrency, and the engine was kept busy
    for limits in processes:
        assert limits.polls > 0  # requests did wait
        assert limits.most_polls_in_flight == 1  # one poller, however many wait


async def _one_process_busy(
    url: str, requests: int, local_limit: int | None
) -> tuple[int, CountingLimits, list[tuple[int, str] | None]]:
    # ``local_limit``: the process's own cap in front of the shared slots, as the search
    # client has (then no request waits in the shared line: slots are kept for the next).
    in_flight = most = 0
    local = asyncio.Semaphore(local_limit or requests)

    async def request(limits: PostgresEngineLimits) -> None:
        nonlocal in_flight, most
        async with local, limits.slot(ENDPOINT):
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.005)
            in_flight -= 1

    pools = [
        AsyncConnectionPool(libpq_url(url), min_size=1, max_size=4, open=False,
                            kwargs={"autocommit": True})
        for _ in range(2)
    ]  # fmt: skip
    for pool in pools:
        await pool.open()
    limits, other = CountingLimits(pools[0]), CountingLimits(pools[1])
    try:
        await asyncio.wait_for(
            asyncio.gather(*(request(limits) for _ in range(requests))), timeout=60
        )
        # Idle for a while, the process gives back what it kept: another takes both at once.
        await asyncio.sleep(PARK_S * 4)
        free = [await other._try_take(engine_key(ENDPOINT), ENDPOINT) for _ in range(2)]
    finally:
        for each in (limits, other):
            await each.aclose()
        for pool in pools:
            await pool.close()
    return most, limits, free


@pytest.mark.parametrize("local_limit", [None, 2])
def test_a_slot_serves_its_process_s_next_requests_then_goes_back(
    limits_db: str, local_limit: int | None
) -> None:
    requests = 5 * HAND_ON
    most, limits, free = asyncio.run(_one_process_busy(limits_db, requests, local_limit))
    assert most == 2
    # Handed on, a slot costs the database a take and a give per HAND_ON requests, not per
    # request; capped, it goes back after HAND_ON, so 5 * HAND_ON requests take slots 5
    # times or more (2 without the cap, 5 * HAND_ON without handing on).
    assert 5 <= limits.takes <= 10
    assert limits.gives == limits.takes
    assert all(taken is not None for taken in free)

"""Engine limits that every worker holds together, coordinated through PostgreSQL.

Concurrency: an engine has ``max_concurrency`` rows in ``engine_slots``; a request takes a
free one (``FOR UPDATE SKIP LOCKED``, so takers never wait on each other's locks) and gives
it back when it ends. When none is free, a process's waiting requests queue locally and one
poller per engine asks again, so a busy engine does not flood the database with retries.
A request that ends hands its slot on within its process, without the database: to a
request waiting for that engine, else to the next one to ask within ``PARK_S`` (a busy
worker's requests follow each other closely; a slot unused that long goes back). A slot
serves at most ``HAND_ON`` requests of a process in a row; then it goes back to the
database, where every process's poller has a fair chance at it. While a process holds or
keeps slots it renews them every second; the slots of a process that died expire
a few seconds later, so a killed worker frees its engines' capacity quickly.

Rate: ``engine_rates.next_at`` is the time the engine's next request may start; each
request reserves the current value and pushes it ``60 / requests_per_minute`` seconds on,
in one statement, then sleeps until its reserved time.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import random
import uuid
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from psycopg_pool import AsyncConnectionPool

from app.search.types import EndpointConfig

__all__ = ["PostgresEngineLimits", "engine_key"]

# A held slot is renewed every RENEW_S; one not renewed for SLOT_TTL_S is free again.
RENEW_S = 1.0
SLOT_TTL_S = 5.0
POLL_MIN_S = 0.005
POLL_MAX_S = 0.05
# A slot serves at most this many requests of one process in a row before going back.
HAND_ON = 16
# A slot kept for the process's next request goes back when none asks for it this long.
PARK_S = 0.05

_CREATE_SLOTS = """
INSERT INTO engine_slots (engine_key, slot)
SELECT %(key)s, s FROM generate_series(0, %(n)s - 1) AS s
ON CONFLICT DO NOTHING
"""
_TAKE_SLOT = """
UPDATE engine_slots SET holder = %(holder)s,
       expires_at = clock_timestamp() + make_interval(secs => %(ttl)s)
WHERE engine_key = %(key)s AND slot = (
    SELECT slot FROM engine_slots
    WHERE engine_key = %(key)s AND slot < %(n)s
      AND (holder IS NULL OR expires_at < clock_timestamp())
    ORDER BY slot LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING slot
"""
_GIVE_SLOT = """
UPDATE engine_slots SET holder = NULL, expires_at = NULL
WHERE engine_key = %(key)s AND slot = %(slot)s AND holder = %(holder)s
"""
_RENEW = """
UPDATE engine_slots SET expires_at = clock_timestamp() + make_interval(secs => %(ttl)s)
WHERE holder LIKE %(owner)s
"""
_RESERVE = """
INSERT INTO engine_rates (engine_key, next_at)
VALUES (%(key)s, clock_timestamp() + make_interval(secs => %(gap)s))
ON CONFLICT (engine_key) DO UPDATE
SET next_at = greatest(engine_rates.next_at, clock_timestamp()) + make_interval(secs => %(gap)s)
RETURNING extract(epoch FROM next_at - clock_timestamp()) - %(gap)s
"""


def engine_key(endpoint: EndpointConfig) -> str:
    """Return the name that all processes use for this endpoint's limits."""
    identity = "\n".join(
        (
            str(endpoint.engine),
            endpoint.url,
            str(endpoint.max_concurrency),
            str(endpoint.requests_per_minute),
        )
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


class PostgresEngineLimits:
    """`SharedLimits` backed by two small tables on the queue's PostgreSQL database."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool
        self._prepared: set[str] = set()
        self._owner = uuid.uuid4().hex[:16]  # this process's mark on the slots it holds
        self._held = 0
        self._renewer: asyncio.Task[None] | None = None
        self._lines: dict[str, _Line] = {}
        self._uses: dict[str, int] = {}  # holder → requests served so far by a handed-on slot
        # Slots kept for this process's next request, per engine: (slot, holder, parking).
        self._parked: dict[str, deque[tuple[int, str, int]]] = {}
        self._parkings = itertools.count()
        self._returning: set[asyncio.Task[None]] = set()

    async def aclose(self) -> None:
        """Give back the slots kept for later and stop renewing (the process is stopping)."""
        kept = [(key, slot, holder) for key, q in self._parked.items() for slot, holder, _ in q]
        self._parked.clear()
        for key, slot, holder in kept:
            await self._give(key, slot, holder)
        if self._returning:
            await asyncio.gather(*self._returning, return_exceptions=True)
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            if not self._held and not any(self._parked.values()):
                continue
            try:
                async with self._pool.connection() as conn:
                    await conn.execute(_RENEW, {"ttl": SLOT_TTL_S, "owner": f"{self._owner}:%"})
            except Exception:  # the database may be briefly away; the next round retries
                continue

    @asynccontextmanager
    async def slot(self, endpoint: EndpointConfig) -> AsyncIterator[None]:
        """Hold one of the endpoint's slots (after its rate allows), across all processes."""
        key = engine_key(endpoint)
        if endpoint.requests_per_minute > 0:
            await self._wait_for_rate(key, 60.0 / endpoint.requests_per_minute)
        if self._renewer is None:
            self._renewer = asyncio.create_task(self._renew_forever())
        kept = self._parked.get(key)
        if kept:
            slot, holder, _parking = kept.popleft()
        else:
            slot, holder = await self._take(key, endpoint)
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            # Given back even when the request was cancelled; if this fails, it expires.
            if not self._hand_on(key, slot, holder):
                await asyncio.shield(self._give(key, slot, holder))

    def _hand_on(self, key: str, slot: int, holder: str) -> bool:
        """Pass a slot to this process's next request; False when it goes back now."""
        uses = self._uses.pop(holder, 0) + 1
        if uses >= HAND_ON:
            return False
        self._uses[holder] = uses
        line = self._lines.get(key)
        waiter = line.first_waiting() if line is not None else None
        if line is not None and waiter is not None:
            line.waiters.popleft()
            waiter.set_result((slot, holder))
            return True
        parking = next(self._parkings)
        self._parked.setdefault(key, deque()).append((slot, holder, parking))
        asyncio.get_running_loop().call_later(PARK_S, self._unpark, key, (slot, holder, parking))
        return True

    def _unpark(self, key: str, kept: tuple[int, str, int]) -> None:
        """Give back a slot that no request of this process asked for within PARK_S."""
        parked = self._parked.get(key)
        if parked is None or kept not in parked:
            return  # taken by a request meanwhile (a later parking has its own timer)
        parked.remove(kept)
        task = asyncio.ensure_future(self._give(key, kept[0], kept[1]))
        self._returning.add(task)
        task.add_done_callback(self._returning.discard)

    async def _wait_for_rate(self, key: str, gap_s: float) -> None:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_RESERVE, {"key": key, "gap": gap_s})).fetchone()
        wait = float(row[0]) if row is not None and row[0] is not None else 0.0
        if wait > 0:
            await asyncio.sleep(wait)

    async def _take(self, key: str, endpoint: EndpointConfig) -> tuple[int, str]:
        """Return a slot and its holder mark, waiting in line when none is free.

        Requests of this process that find no free slot queue here, and one poller per
        endpoint asks the database for them: a full engine costs one query per poll, not
        one per waiting request.
        """
        line = self._lines.setdefault(key, _Line())
        if not line.waiters:
            taken = await self._try_take(key, endpoint)
            if taken is not None:
                return taken
        waiter: asyncio.Future[tuple[int, str]] = asyncio.get_running_loop().create_future()
        line.waiters.append(waiter)
        if line.poller is None or line.poller.done():
            line.poller = asyncio.create_task(self._poll(key, endpoint, line))
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot as it was cancelled
                await asyncio.shield(self._give(key, *waiter.result()))
            raise

    async def _poll(self, key: str, endpoint: EndpointConfig, line: _Line) -> None:
        pause = POLL_MIN_S
        while line.first_waiting() is not None:
            try:
                taken = await self._try_take(key, endpoint)
            except Exception:  # the database may be briefly away; poll again
                taken = None
            if taken is None:
                await asyncio.sleep(pause * (0.5 + random.random()))
                pause = min(pause * 2, POLL_MAX_S)
                continue
            pause = POLL_MIN_S
            waiter = line.first_waiting()
            if waiter is None:  # everyone waiting gave up meanwhile
                await self._give(key, *taken)
                return
            line.waiters.popleft()
            waiter.set_result(taken)

    async def _try_take(self, key: str, endpoint: EndpointConfig) -> tuple[int, str] | None:
        n = endpoint.max_concurrency
        holder = f"{self._owner}:{uuid.uuid4().hex[:32]}"
        async with self._pool.connection() as conn:
            if key not in self._prepared:
                await conn.execute(_CREATE_SLOTS, {"key": key, "n": n})
                self._prepared.add(key)
            params = {"key": key, "n": n, "holder": holder, "ttl": SLOT_TTL_S}
            row = await (await conn.execute(_TAKE_SLOT, params)).fetchone()
        return None if row is None else (int(row[0]), holder)

    async def _give(self, key: str, slot: int, holder: str) -> None:
        self._uses.pop(holder, None)
        try:
            async with self._pool.connection() as conn:
                await conn.execute(_GIVE_SLOT, {"key": key, "slot": slot, "holder": holder})
        except Exception:  # the slot expires on its own
            return


@dataclass
class _Line:
    """This process's requests waiting for a slot of one endpoint, and their poller."""

    waiters: deque[asyncio.Future[tuple[int, str]]] = field(default_factory=deque)
    poller: asyncio.Task[None] | None = None

    def first_waiting(self) -> asyncio.Future[tuple[int, str]] | None:
        """Return the first waiter still waiting (dropping those that gave up)."""
        while self.waiters and self.waiters[0].done():
            self.waiters.popleft()
        return self.waiters[0] if self.waiters else None

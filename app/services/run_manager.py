"""Runs started by the web app: one shared httpx client, tasks kept until they end."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
from sqlalchemy.orm import Session, sessionmaker

from app.search import SearchClient
from app.services.runner import execute_run

CLIENT_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64)


class RunManager:
    """Starts runs in the current event loop and closes them down with the app."""

    def __init__(
        self,
        *,
        session_factory: sessionmaker[Session],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._session_factory = session_factory
        self._loop = loop
        self._http: httpx.AsyncClient | None = None
        self._search: SearchClient | None = None
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def _client(self) -> SearchClient:
        if self._search is None:
            self._http = httpx.AsyncClient(limits=CLIENT_LIMITS, follow_redirects=False)
            self._search = SearchClient(self._http)
        return self._search

    def start(self, run_id: int) -> asyncio.Task[None]:
        """Start executing a queued run and return its task."""
        task = asyncio.create_task(
            execute_run(session_factory=self._session_factory, run_id=run_id, search=self._client())
        )
        self._tasks[run_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(run_id, None))
        return task

    def submit(self, run_id: int) -> concurrent.futures.Future[None]:
        """Start a run from a request thread; the future completes when the run ends."""
        if self._loop is None:
            raise RuntimeError("This run manager has no event loop to run in.")

        async def started() -> None:
            await self.start(run_id)

        return asyncio.run_coroutine_threadsafe(started(), self._loop)

    def spawn(
        self, work: Callable[[], Coroutine[Any, Any, None]]
    ) -> concurrent.futures.Future[None]:
        """Run a coroutine (a sweep) in the manager's loop from a request thread."""
        if self._loop is None:
            raise RuntimeError("This run manager has no event loop to run in.")
        return asyncio.run_coroutine_threadsafe(work(), self._loop)

    async def run(self, run_id: int) -> None:
        """Start a queued run and wait until it ends (as a sweep does for each combination)."""
        await self.start(run_id)

    async def aclose(self) -> None:
        """Cancel unfinished runs (they are marked failed) and close the HTTP client."""
        for task in list(self._tasks.values()):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        if self._http is not None:
            await self._http.aclose()

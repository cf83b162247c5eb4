"""The app's run manager as judge routers use it: judge runs launch through it.

Judges sit below runs, so this names only what launching a judge run needs of the manager
(app.runs.manager.RunManager provides it).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, Protocol

from fastapi import Depends, Request

__all__ = ["JudgeQueue", "JudgeRunManager", "RunManagerDep"]


class JudgeQueue(Protocol):
    """The job queue, as far as judge runs use it."""

    async def enqueue_judge_run(self, run_id: int) -> None: ...


class JudgeRunManager(Protocol):
    """The run manager, as far as judge runs use it."""

    @property
    def queue(self) -> JudgeQueue | None: ...

    def spawn(
        self, work: Callable[[], Coroutine[Any, Any, None]]
    ) -> concurrent.futures.Future[None]: ...


def run_manager(request: Request) -> JudgeRunManager:
    """Return the app's run manager (made when the app starts)."""
    manager: JudgeRunManager = request.app.state.run_manager
    return manager


RunManagerDep = Annotated[JudgeRunManager, Depends(run_manager)]

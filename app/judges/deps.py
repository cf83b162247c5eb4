"""Judge routers' dependencies: a judge or a book's judge run the caller may see (or 404),
and the app's run manager, through which judge runs launch.

Judges sit below runs, so this names only what launching a judge run needs of the manager
(app.runs.manager.RunManager provides it).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, Protocol

from fastapi import Depends, Request
from sqlalchemy.orm import Session, sessionmaker

from app.accounts.deps import BookDep, WebBookDep, owned
from app.judges import runs, service
from app.models import Judge, JudgeRun

__all__ = [
    "JudgeDep",
    "JudgeQueue",
    "JudgeRunDep",
    "JudgeRunManager",
    "RunManagerDep",
    "WebJudgeDep",
    "WebJudgeRunDep",
]


class JudgeQueue(Protocol):
    """The job queue, as far as judge runs use it."""

    async def enqueue_judge_run(self, run_id: int) -> None: ...


class JudgeRunManager(Protocol):
    """The run manager, as far as judge runs use it."""

    @property
    def queue(self) -> JudgeQueue | None: ...

    @property
    def session_factory(self) -> sessionmaker[Session]: ...

    def spawn(
        self, work: Callable[[], Coroutine[Any, Any, None]]
    ) -> concurrent.futures.Future[None]: ...


def run_manager(request: Request) -> JudgeRunManager:
    """Return the app's run manager (made when the app starts)."""
    manager: JudgeRunManager = request.app.state.run_manager
    return manager


RunManagerDep = Annotated[JudgeRunManager, Depends(run_manager)]
JudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id"))]
WebJudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id", page=True))]
JudgeRunDep = Annotated[JudgeRun, Depends(owned(runs.get_run, "run_id", inside=("book", BookDep)))]
WebJudgeRunDep = Annotated[
    JudgeRun, Depends(owned(runs.get_run, "run_id", inside=("book", WebBookDep)))
]

"""Judge routers' dependencies: a judge or a book's judge run the caller may see (or 404),
the app's run manager, through which judge runs launch, and its judge client (trials).

Judges sit below runs: app.judges.launch names what launching a judge run needs of the
manager (app.runs.manager.RunManager provides it).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.accounts.deps import owned
from app.books.deps import BookDep, WebBookDep
from app.judges import runs, service
from app.judges.client import JudgeClient
from app.judges.launch import JudgeRunManager
from app.models import Judge, JudgeRun

__all__ = [
    "JudgeClientDep",
    "JudgeDep",
    "JudgeRunDep",
    "RunManagerDep",
    "WebJudgeDep",
    "WebJudgeRunDep",
]


def run_manager(request: Request) -> JudgeRunManager:
    """Return the app's run manager (made when the app starts)."""
    manager: JudgeRunManager = request.app.state.run_manager
    return manager


def judge_client(request: Request) -> JudgeClient:
    """Return the process's judge client (the run manager's): one set of limits per judge."""
    client: JudgeClient = request.app.state.judge_client
    return client


RunManagerDep = Annotated[JudgeRunManager, Depends(run_manager)]
JudgeClientDep = Annotated[JudgeClient, Depends(judge_client)]
JudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id"))]
WebJudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id", page=True))]
JudgeRunDep = Annotated[JudgeRun, Depends(owned(runs.get_run, "run_id", inside=("book", BookDep)))]
WebJudgeRunDep = Annotated[
    JudgeRun, Depends(owned(runs.get_run, "run_id", inside=("book", WebBookDep)))
]

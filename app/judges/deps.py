"""Judge routers' dependencies: a judge or a book's judge run the caller may see (or 404),
and the app's run manager, through which judge runs launch.

Judges sit below runs: app.judges.launch names what launching a judge run needs of the
manager (app.runs.manager.RunManager provides it).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.accounts.deps import BookDep, WebBookDep, owned
from app.judges import runs, service
from app.judges.launch import JudgeRunManager
from app.models import Judge, JudgeRun

__all__ = [
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


RunManagerDep = Annotated[JudgeRunManager, Depends(run_manager)]
JudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id"))]
WebJudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id", page=True))]
JudgeRunDep = Annotated[JudgeRun, Depends(owned(runs.get_run, "run_id", inside=("book", BookDep)))]
WebJudgeRunDep = Annotated[
    JudgeRun, Depends(owned(runs.get_run, "run_id", inside=("book", WebBookDep)))
]

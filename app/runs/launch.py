"""Starting and cancelling a case's runs through the app's run manager.

Each is one call for a router: the run is created (or cancelled), and once that is
committed the manager starts it (or drops its chunks still queued): its executing process
reads it with connections of its own.
"""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy.orm import Session

from app.db import after_commit
from app.models import Case, Run
from app.runs import service
from app.runs.manager import RunManager
from app.runs.schemas import RunCreate, RunDetail, RunStarted
from app.vocabulary import RunStatus

__all__ = ["cancel_run", "start_run", "submit_run"]


async def start_run(
    *,
    session: Session,
    case: Case,
    manager: RunManager,
    user_id: int,
    body: RunCreate,
    trigger: str,
    wait: bool = False,
) -> RunDetail | RunStarted:
    """Create a run and start it; with ``wait``, return it once it has ended.

    A waiting caller holds neither a thread nor a database connection meanwhile, and holds
    one of the user's waiting slots (429 beyond them).
    """
    with manager.wait_slot(user_id) if wait else contextlib.nullcontext():
        run_id = await asyncio.to_thread(_create, session, case, body, trigger)
        task = manager.start(run_id)
        if not wait:
            return RunStarted(id=run_id, status=RunStatus.QUEUED)
        # A client that goes away stops waiting, not the run.
        await asyncio.shield(task)
    return await asyncio.to_thread(_finished_detail, session, run_id)


def _create(session: Session, case: Case, body: RunCreate, trigger: str) -> int:
    run = service.create_run(
        session=session,
        case=case,
        try_number=body.try_number,
        explain=body.explain,
        trigger=trigger,
    )
    run_id = run.id
    # The request's one transaction ends here: the run is started (and may be waited for)
    # by sessions of its own, which must see it.
    session.commit()
    session.close()  # back to the pool while the run goes on
    return run_id


def _finished_detail(session: Session, run_id: int) -> RunDetail:
    # Read afresh: the case (and with it the run) may have been deleted meanwhile (404).
    return service.detail(session=session, run=service.finished_run(session=session, run_id=run_id))


def submit_run(*, session: Session, case: Case, manager: RunManager) -> Run:
    """Create a run of the case's current try and start it, from a request thread."""
    run = service.create_run(session=session, case=case)
    run_id = run.id
    after_commit(session, lambda: manager.submit(run_id))
    return run


def cancel_run(*, session: Session, run: Run, manager: RunManager) -> Run:
    """Cancel a queued or running run (409 once it has ended) and drop its queued chunks."""
    run = service.cancel_run(session=session, run=run)
    run_id = run.id
    after_commit(session, lambda: manager.cancelled(run_id))
    return run

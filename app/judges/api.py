"""Judges (language models as raters) and their runs on books."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool

from app.accounts.deps import CurrentUser
from app.books.deps import BookDep
from app.judges import launch, runs, service, trial
from app.judges import pages as page_data
from app.judges.deps import JudgeClientDep, JudgeDep, JudgeRunDep, RunManagerDep
from app.judges.schemas import (
    JudgeCreate,
    JudgeRead,
    JudgeRunCreate,
    JudgeRunEstimate,
    JudgeRunRead,
    JudgeTest,
    JudgeTestRead,
    JudgeUpdate,
)
from app.web_common.deps import SessionDep

router = APIRouter(tags=["judges"])


@router.get("/judges", response_model=list[JudgeRead])
def list_judges(user: CurrentUser, session: SessionDep) -> list[JudgeRead]:
    """Return the judges the caller may use."""
    return [service.to_read(j) for j in service.list_judges(session=session, user=user)]


@router.post("/judges", response_model=JudgeRead, status_code=201)
def create_judge(body: JudgeCreate, user: CurrentUser, session: SessionDep) -> JudgeRead:
    """Create a judge (its key and header values are stored encrypted, never returned)."""
    return service.to_read(service.create_judge(session=session, user=user, body=body))


@router.get("/judges/{judge_id}", response_model=JudgeRead)
def get_judge(judge: JudgeDep) -> JudgeRead:
    """Return one judge."""
    return service.to_read(judge)


@router.patch("/judges/{judge_id}", response_model=JudgeRead)
def update_judge(
    judge: JudgeDep, body: JudgeUpdate, user: CurrentUser, session: SessionDep
) -> JudgeRead:
    """Change a judge; a new host drops the key and headers unless sent again."""
    return service.to_read(service.update_judge(session=session, user=user, judge=judge, body=body))


@router.delete("/judges/{judge_id}", status_code=204)
def delete_judge(judge: JudgeDep, user: CurrentUser, session: SessionDep) -> None:
    """Delete a judge (its owner only) and its judgements."""
    service.delete_judge(session=session, user=user, judge=judge)


@router.post("/judges/{judge_id}/test", response_model=JudgeTestRead)
async def test_judge(
    judge: JudgeDep,
    body: JudgeTest,
    user: CurrentUser,
    session: SessionDep,
    judges: JudgeClientDep,
) -> JudgeTestRead:
    """Ask the judge about n of a book's pairs and show prompt, reply, rating and cost."""

    def prepare() -> Any:
        prepared = trial.prepare(
            session=session, user=user, book_id=body.book_id, judge=judge, n=body.n
        )
        session.close()  # no connection held while the judge thinks
        return prepared

    judge_id = judge.id
    config, scale, picked = await run_in_threadpool(prepare)
    return await trial.try_judge(
        client=judges,
        config=config,
        scale=scale,
        picked=picked,
        judge_id=judge_id,
        book_id=body.book_id,
    )


@router.post(
    "/books/{book_id}/judge-runs",
    response_model=JudgeRunRead | JudgeRunEstimate,
    status_code=202,
)
def start_judge_run(
    book: BookDep,
    body: JudgeRunCreate,
    user: CurrentUser,
    session: SessionDep,
    manager: RunManagerDep,
    response: Response,
) -> JudgeRunRead | JudgeRunEstimate:
    """Start a judge run on the book (202), or with dry_run estimate it (200, nothing sent)."""
    if body.dry_run:
        response.status_code = 200
        return launch.estimate(session=session, user=user, book=book, body=body)
    return launch.start(session=session, manager=manager, user=user, book=book, body=body)


@router.get("/books/{book_id}/judge-runs", response_model=list[JudgeRunRead])
def list_judge_runs(book: BookDep, session: SessionDep) -> list[JudgeRunRead]:
    """Return the book's judge runs, newest first."""
    return [
        runs.to_read(session=session, run=r) for r in runs.list_runs(session=session, book=book)
    ]


@router.get("/books/{book_id}/judge-runs/{run_id}", response_model=JudgeRunRead)
def get_judge_run(run: JudgeRunDep, session: SessionDep) -> JudgeRunRead:
    """Return one judge run with its failures."""
    return runs.to_read(session=session, run=run, with_failures=True)


@router.post("/books/{book_id}/judge-runs/{run_id}/cancel", response_model=JudgeRunRead)
def cancel_judge_run(run: JudgeRunDep, session: SessionDep) -> JudgeRunRead:
    """Cancel a judge run (a running one stops at its next write, within a second)."""
    return runs.to_read(session=session, run=runs.cancel_run(session=session, run=run))


@router.post(
    "/books/{book_id}/judge-runs/{run_id}/resume", response_model=JudgeRunRead, status_code=202
)
def resume_judge_run(run: JudgeRunDep, session: SessionDep, manager: RunManagerDep) -> JudgeRunRead:
    """Resume a paused judge run: it asks only about the pairs it has not done."""
    return launch.resume(session=session, manager=manager, run=run)


# JSON twins of the judge pages: the same page-data functions, served as JSON.


@router.get("/pages/judges", response_model=page_data.JudgesPage, name="judges_page_json")
def judges_page(user: CurrentUser, session: SessionDep) -> page_data.JudgesPage:
    """Return the data of the judges list page."""
    return page_data.judges_page(session=session, user=user)


@router.get(
    "/pages/books/{book_id}/judging",
    response_model=page_data.JudgingPage,
    name="book_judging_page_json",
)
def judging_page(book: BookDep, user: CurrentUser, session: SessionDep) -> page_data.JudgingPage:
    """Return the data of 'Judge this book': judges, runs and the review queue."""
    return page_data.judging_page(session=session, user=user, book=book)

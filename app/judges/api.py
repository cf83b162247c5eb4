"""Judges (language models as raters) and their runs on books."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool

from app.accounts.deps import CurrentUser
from app.books.deps import BookDep
from app.judges import launch, run_views, runs, service, trial
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
from app.web_common.owned import Owned, OwnedSchemas, OwnedService, RouteDocs, add_owned_routes

router = APIRouter(tags=["judges"])


add_owned_routes(
    router,
    Owned("judge", "judges", "/judges/{judge_id}", user=CurrentUser, item=JudgeDep),
    OwnedSchemas(read=JudgeRead, create=JudgeCreate, update=JudgeUpdate),
    OwnedService(
        service.to_read,
        service.list_judges,
        service.create_judge,
        service.update_judge,
        service.delete_judge,
    ),
    RouteDocs(
        list="Return the judges the caller may use.",
        create="Create a judge (its key and header values are stored encrypted, never returned).",
        get="Return one judge.",
        update="Change a judge; a new host drops the key and headers unless sent again.",
        delete="Delete a judge (its owner only) and its judgements.",
    ),
)


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
        run_views.to_read(session=session, run=r)
        for r in runs.list_runs(session=session, book=book)
    ]


@router.get("/books/{book_id}/judge-runs/{run_id}", response_model=JudgeRunRead)
def get_judge_run(run: JudgeRunDep, session: SessionDep) -> JudgeRunRead:
    """Return one judge run with its failures."""
    return run_views.to_read(session=session, run=run, with_failures=True)


@router.post("/books/{book_id}/judge-runs/{run_id}/cancel", response_model=JudgeRunRead)
def cancel_judge_run(run: JudgeRunDep, session: SessionDep) -> JudgeRunRead:
    """Cancel a judge run (a running one stops at its next write, within a second)."""
    return run_views.to_read(session=session, run=runs.cancel_run(session=session, run=run))


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

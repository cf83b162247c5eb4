"""Judge pages: list and form (with "test on 5 pairs"), "Judge this book", a judge run."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.accounts.deps import WebUser, owned
from app.books.deps import WebBookDep
from app.errors import Conflict, Invalid, NotFound
from app.judges import launch, run_views, runs, service, trial
from app.judges import pages as page_data
from app.judges.deps import JudgeClientDep, RunManagerDep, WebJudgeRunDep
from app.judges.prompt import DEFAULT_PROMPT
from app.judges.schemas import (
    JudgeCreate,
    JudgeRunCreate,
    JudgeRunEstimate,
    JudgeTestRead,
    JudgeUpdate,
)
from app.models import Book, Judge, User
from app.web_common.deleting import Deletable, Farewell, add_delete_routes
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text, parse_body
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)

_NUMBERS = (
    "temperature",
    "max_output_tokens",
    "requests_per_minute",
    "tokens_per_minute",
    "max_concurrency",
    "price_input_per_mtok",
    "price_output_per_mtok",
    "timeout_s",
)


WebJudgeDep = Annotated[Judge, Depends(owned(service.visible_judge, "judge_id", page=True))]


def _values(form: FormData, *, creating: bool) -> dict[str, Any]:
    """Return the judge form as body values: blank numbers and blank secrets are left out."""
    values: dict[str, Any] = {
        name: field_text(form, name).strip()
        for name in ("name", "provider", "base_url", "model")
        if creating or field_text(form, name).strip()
    }
    for name in _NUMBERS:
        text = field_text(form, name).strip()
        if text:
            values[name] = text
    prompt = field_text(form, "prompt")
    values["prompt"] = prompt if prompt.strip() else None
    key = field_text(form, "api_key")
    if key:
        values["api_key"] = key
    headers = field_text(form, "headers").strip()
    if headers:
        pairs = [line.partition(":") for line in headers.splitlines() if line.strip()]
        values["headers"] = {n.strip(): v.strip() for n, _sep, v in pairs}
    return values


@router.get("/judges", name="judges_page")
def judges_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the user's judges, with a form for a new one."""
    return _list(request, user, session, {}, {})


def _list(
    request: Request,
    user: User,
    session: SessionDep,
    form: dict[str, Any],
    errors: dict[str, str],
    status_code: int = 200,
) -> Response:
    page = page_data.judges_page(session=session, user=user)
    context = {
        "user": user,
        "page": page,
        "form": form,
        "errors": errors,
        "defaults": JudgeCreate.model_construct(name="", provider="openai", base_url="", model=""),
        "default_prompt": DEFAULT_PROMPT,
    }
    return render(request, "judges/judges.html", context, status_code)


@router.post("/judges", name="judge_create_submit")
def create_judge(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a judge from the form and open it; bad fields re-render the list (422)."""
    values = _values(form, creating=True)
    try:
        body = parse_body(JudgeCreate, values)
    except FormErrors as exc:
        return _list(request, user, session, values, exc.errors, 422)
    judge = service.create_judge(session=session, user=user, body=body)
    return see_other(request.url_for("judge_model_page", judge_id=judge.id))


@router.get("/judges/{judge_id}", name="judge_model_page")
def judge_page(
    request: Request, judge: WebJudgeDep, user: WebUser, session: SessionDep
) -> Response:
    """Show a judge's form (secrets only as 'key set' and header names) and the test form;
    ``?trial=ID`` shows a test's kept result (where *Test* redirects), without a new call."""
    wanted = request.query_params.get("trial", "")
    if not wanted:
        return _judge(request, user, session, judge, {})
    found = (
        trial.kept(session=session, user=user, judge=judge, trial_id=int(wanted))
        if wanted.isdigit()
        else None
    )
    if found is None:
        gone_note = {"form": "That test's result is no longer kept: test the judge again."}
        return _judge(request, user, session, judge, gone_note, status_code=404)
    return _judge(request, user, session, judge, {}, test=found)


def _judge(
    request: Request,
    user: User,
    session: SessionDep,
    judge: Judge,
    errors: dict[str, str],
    *,
    status_code: int = 200,
    test: JudgeTestRead | None = None,
    saved: bool = False,
) -> Response:
    context = {
        "user": user,
        "judge": service.to_read(judge),
        "books": page_data.book_choices(session=session, user=user),
        "errors": errors,
        "test": test,
        "saved": saved or request.query_params.get("saved") == "1",
    }
    return render(request, "judges/judge_model.html", context, status_code)


@router.post("/judges/{judge_id}", name="judge_update_submit")
def update_judge(
    request: Request,
    judge: WebJudgeDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save a judge; blank key and headers keep the stored ones."""
    values = _values(form, creating=False)
    if field_text(form, "remove_api_key"):
        values["api_key"] = ""
    if values.get("prompt") is None:
        values["prompt"] = ""  # a blank prompt box means the default prompt
    try:
        body = parse_body(JudgeUpdate, values)
        service.update_judge(session=session, user=user, judge=judge, body=body)
    except FormErrors as exc:
        return _judge(request, user, session, judge, exc.errors, status_code=422)
    url = request.url_for("judge_model_page", judge_id=judge.id).include_query_params(saved=1)
    return see_other(url)


def _judge_doom(session: Session, judge: Judge) -> str:
    """Return what goes with a judge when it is deleted."""
    runs_count = page_data.run_count(session=session, judge=judge)
    return (
        f"Its ratings of every book and its {runs_count} "
        f"{'run' if runs_count == 1 else 'runs'} are deleted with it (a judge with a run "
        "under way cannot be deleted: cancel the run first); the people's ratings stay."
    )


add_delete_routes(
    router,
    Deletable("judge", "/judges/{judge_id}", WebUser, WebJudgeDep, service.delete_judge),
    Farewell(_judge_doom, back="judge_model_page", after="judges_page"),
    docs=(
        "Ask before deleting a judge, saying what goes with it.",
        "Delete a judge (its owner only; 409 page while it has a run under way).",
    ),
)


@router.post("/judges/{judge_id}/test", name="judge_test_submit")
async def test_judge(
    request: Request,
    judge: WebJudgeDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
    judges: JudgeClientDep,
) -> Response:
    """Ask the judge about a few pairs of a book and show each prompt, reply and cost."""
    try:
        book_id = int(field_text(form, "book_id"))
        n = max(1, min(20, int(field_text(form, "n") or 5)))
        config, scale, picked = trial.prepare(
            session=session, user=user, book_id=book_id, judge=judge, n=n
        )
    except (ValueError, NotFound):
        return _judge(request, user, session, judge, {"book_id": "Choose a book."}, status_code=422)
    except Conflict as exc:
        return _judge(request, user, session, judge, {"form": exc.message}, status_code=409)
    result = await trial.try_judge(
        client=judges,
        config=config,
        scale=scale,
        picked=picked,
        judge_id=judge.id,
        book_id=book_id,
    )
    # Post/redirect/get: the result is kept and shown on the judge's page, so that a reload
    # shows it again instead of posting the form (and paying for the calls) once more.
    kept_id = trial.keep(session=session, user=user, judge=judge, result=result)
    url = request.url_for("judge_model_page", judge_id=judge.id).include_query_params(trial=kept_id)
    return see_other(str(url) + "#judge-test")


@router.get("/books/{book_id}/judging", name="book_judging_page")
def judging_page(
    request: Request, book: WebBookDep, user: WebUser, session: SessionDep
) -> Response:
    """'Judge this book': choose a judge and pairs, see the estimate, start, follow runs."""
    return _judging(request, user, session, book, {}, None)


def _judging(
    request: Request,
    user: User,
    session: SessionDep,
    book: Book,
    errors: dict[str, str],
    estimate: JudgeRunEstimate | None,
    form: dict[str, Any] | None = None,
    status_code: int = 200,
) -> Response:
    page = page_data.judging_page(session=session, user=user, book=book)
    context = {
        "user": user,
        "page": page,
        "errors": errors,
        "estimate": estimate,
        "form": form or {},
    }
    return render(request, "judges/judging.html", context, status_code)


def _run_values(form: FormData) -> dict[str, Any]:
    values: dict[str, Any] = {
        "judge_id": field_text(form, "judge_id"),
        "pairs": field_text(form, "pairs") or "unjudged",
    }
    for name in ("limit", "budget_usd", "budget_tokens"):
        text = field_text(form, name).strip()
        if text:
            values[name] = text
    return values


@router.post("/books/{book_id}/judging", name="book_judging_submit")
def start_run(
    request: Request,
    book: WebBookDep,
    user: WebUser,
    session: SessionDep,
    manager: RunManagerDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Estimate (the Estimate button) or start a judge run and open its page."""
    values = _run_values(form)
    dry = field_text(form, "action") == "estimate"
    try:
        body = parse_body(JudgeRunCreate, {**values, "dry_run": dry})
        if dry:
            estimate = launch.estimate(session=session, user=user, book=book, body=body)
            return _judging(request, user, session, book, {}, estimate, values)
        run = launch.start(session=session, manager=manager, user=user, book=book, body=body)
    except FormErrors as exc:
        return _judging(request, user, session, book, exc.errors, None, values, 422)
    except (Invalid, NotFound, Conflict) as exc:
        code = 409 if isinstance(exc, Conflict) else 422
        return _judging(request, user, session, book, {"form": exc.message}, None, values, code)
    url = request.url_for("judge_run_page", book_id=book.id, run_id=run.id)
    return see_other(url)


@router.get("/books/{book_id}/judge-runs/{run_id}", name="judge_run_page")
def run_page(
    request: Request, book: WebBookDep, found: WebJudgeRunDep, user: WebUser, session: SessionDep
) -> Response:
    """A judge run: progress (live while it runs), counters, failures, retry and cancel."""
    run = run_views.to_read(session=session, run=found, with_failures=True)
    template = (
        "judges/partials/judge_run_progress.html"
        if request.headers.get("HX-Request")
        else "judges/judge_run.html"
    )
    return render(request, template, {"user": user, "run": run, "book": book})


@router.post("/books/{book_id}/judge-runs/{run_id}/cancel", name="judge_run_cancel_submit")
def cancel_run(
    request: Request,
    book: WebBookDep,
    run: WebJudgeRunDep,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Cancel a judge run and come back to its page."""
    runs.cancel_run(session=session, run=run)
    url = request.url_for("judge_run_page", book_id=book.id, run_id=run.id)
    return see_other(url)


@router.post("/books/{book_id}/judge-runs/{run_id}/resume", name="judge_run_resume_submit")
def resume_run(
    request: Request,
    book: WebBookDep,
    run: WebJudgeRunDep,
    user: WebUser,
    session: SessionDep,
    manager: RunManagerDep,
    _csrf: CsrfChecked,
) -> Response:
    """Resume a paused run (or one whose process stopped) and come back to its page."""
    try:
        launch.resume(session=session, manager=manager, run=run)
    except Conflict as exc:
        return _judging(request, user, session, book, {"form": exc.message}, None, None, 409)
    url = request.url_for("judge_run_page", book_id=book.id, run_id=run.id)
    return see_other(url)


@router.post("/books/{book_id}/judge-runs/{run_id}/retry", name="judge_run_retry_submit")
def retry_failed(
    request: Request,
    book: WebBookDep,
    old: WebJudgeRunDep,
    user: WebUser,
    session: SessionDep,
    manager: RunManagerDep,
    _csrf: CsrfChecked,
) -> Response:
    """Start a new run of the same judge over the pairs that failed."""
    try:
        run = launch.retry_failed(session=session, manager=manager, user=user, book=book, run=old)
    except (Conflict, Invalid, NotFound) as exc:
        return _judging(request, user, session, book, {"form": exc.message}, None, None, 409)
    url = request.url_for("judge_run_page", book_id=book.id, run_id=run.id)
    return see_other(url)

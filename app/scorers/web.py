"""Scorer pages: the list, the editor, and trying a scorer on one query of a case."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from app.accounts.deps import WebUser
from app.errors import Invalid
from app.models import User
from app.scorers import service as scorer_service
from app.scorers.config import build_config
from app.scorers.deps import WebScorerDep
from app.scorers.forms import ENVIRONMENTS, KIND_PRESETS, SCALE_PRESETS, ScorerForm
from app.scorers.pages import data as scorer_pages
from app.scorers.pages.schemas import ScorerPage, TryOutcome
from app.vocabulary import ScorerKind
from app.web_common.deleting import Deletable, Farewell, add_delete_routes
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)

KINDS: tuple[str, ...] = tuple(ScorerKind)
NEW_SCORER = {
    "name": "",
    "kind": ScorerKind.JAVASCRIPT,
    "params": "",
    "scale": "0, 1",
    "labels": "0=Irrelevant\n1=Relevant",
    "max_score": "100",
    "environment": "relevo",
    "code": (
        "// Share of the top 10 results rated relevant, on 0-100.\n"
        "var hits = 0;\n"
        "for (var i = 0; i < 10; i++) {\n"
        "  if (hasDocRating(i) && docRating(i) > 0) { hits++; }\n"
        "}\n"
        'console.log("relevant in the top 10: " + hits);\n'
        "setScore(hits * 10);\n"
    ),
}


@router.get("/scorers", name="scorers_page")
def scorers_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the built-in presets and the user's scorers."""
    data = scorer_pages.scorers_page(session=session, user=user)
    return render(request, "scorers/scorers.html", {"user": user, "page": data})


@router.get("/scorers/new", name="scorer_new_page")
def new_scorer(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show an empty scorer editor."""
    data = scorer_pages.scorer_page(session=session, user=user, scorer=None)
    return _editor(request, user, data, ScorerForm(NEW_SCORER))


@router.post("/scorers", name="scorer_create_submit")
def create_scorer(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a scorer, or try the unsaved one on a query (the 'Try' button)."""
    editor = ScorerForm.read(form)
    data = scorer_pages.scorer_page(session=session, user=user, scorer=None)
    try:
        if field_text(form, "action") == "try":
            outcome = _try(session, user, editor, form)
            return _editor(request, user, data, editor, outcome=outcome)
        scorer = scorer_service.create_scorer(session=session, user=user, body=editor.create_body())
    except (FormErrors, Invalid) as exc:
        return _editor(request, user, data, editor.add(exc), status_code=422)
    return _saved(request, scorer.id)


@router.get("/scorers/{scorer_id}", name="scorer_page")
def scorer_page(
    request: Request, scorer: WebScorerDep, user: WebUser, session: SessionDep
) -> Response:
    """Show the editor of a scorer (a preset is read-only but can be tried)."""
    data = scorer_pages.scorer_page(session=session, user=user, scorer=scorer)
    assert data.scorer is not None
    saved = request.query_params.get("saved") == "1"
    return _editor(request, user, data, ScorerForm.of(data.scorer), saved=saved)


@router.post("/scorers/{scorer_id}", name="scorer_update_submit")
def update_scorer(
    request: Request,
    scorer: WebScorerDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save a scorer, or try the edited version on a query (the 'Try' button)."""
    editor = ScorerForm.read(form)
    editor.values["kind"] = scorer.kind  # a scorer's kind never changes
    data = scorer_pages.scorer_page(session=session, user=user, scorer=scorer)
    try:
        if field_text(form, "action") == "try":
            outcome = _try(session, user, editor, form)
            return _editor(request, user, data, editor, outcome=outcome)
        scorer_service.update_scorer(
            session=session, user=user, scorer=scorer, body=editor.update_body()
        )
    except (FormErrors, Invalid) as exc:
        return _editor(request, user, data, editor.add(exc), status_code=422)
    return _saved(request, scorer.id)


def _saved(request: Request, scorer_id: int) -> Response:
    url = request.url_for("scorer_page", scorer_id=scorer_id).include_query_params(saved=1)
    return see_other(url)


def _editor(
    request: Request,
    user: User,
    data: ScorerPage,
    editor: ScorerForm,
    *,
    outcome: TryOutcome | None = None,
    saved: bool = False,
    status_code: int = 200,
) -> Response:
    context = {
        "user": user,
        "page": data,
        "form": editor.values,
        "errors": editor.errors,
        "outcome": outcome,
        "saved": saved,
        "kinds": KINDS,
        "kind_presets": KIND_PRESETS,
        "scale_presets": SCALE_PRESETS,
        "environments": ENVIRONMENTS,
    }
    return render(request, "scorers/scorer.html", context, status_code=status_code)


def _try(session: SessionDep, user: User, editor: ScorerForm, form: FormData) -> TryOutcome:
    """Score the chosen query with the editor's (maybe unsaved) scorer."""
    raw_id = field_text(form, "try_query_id")
    if not raw_id.isdigit():
        editor.fail("try_query_id", "Choose a query to try the scorer on.")
    config = build_config(**editor.spec())  # trying needs no name
    return scorer_pages.try_scorer(session=session, user=user, config=config, query_id=int(raw_id))


add_delete_routes(
    router,
    Deletable(
        "scorer", "/scorers/{scorer_id}", WebUser, WebScorerDep, scorer_service.delete_scorer
    ),
    Farewell(
        "Only a scorer that no case uses can be deleted.", back="scorer_page", after="scorers_page"
    ),
    docs=(
        "Ask before deleting a scorer.",
        "Delete a scorer no case uses (409 page otherwise) and go back to the scorers.",
    ),
)

"""The "Shared with" control of a case, scorer, search endpoint or book (owner changes it)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.access import Shareable
from app.accounts.deps import WebUser
from app.errors import NotFound
from app.models import User
from app.teams import service as teams
from app.teams.deps import SharedDep
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

router = APIRouter(route_class=HtmlErrorRoute)

KINDS = ("case", "scorer", "endpoint", "book")
# The resource's own page and its JSON twin (which carries `team_ids`).
PAGES = {
    "case": ("case_page", "get_case", "case_id"),
    "scorer": ("scorer_page", "get_scorer", "scorer_id"),
    "endpoint": ("endpoint_page", "get_endpoint", "endpoint_id"),
    "book": ("book_page", "get_book", "book_id"),
}


def _render(
    request: Request, user: User, session: Session, kind: str, obj: Shareable, status: int = 200
) -> Response:
    page, twin, key = PAGES[kind]
    context = {
        "user": user,
        "kind": kind,
        "obj": obj,
        "owner": obj.owner_id == user.id,
        "shared": {t.id for t in obj.teams},
        "teams": teams.list_teams(session=session, user=user),
        "back": str(request.url_for(page, **{key: obj.id})),
        "twin": str(request.url_for(twin, **{key: obj.id})),
    }
    template = "teams/partials/sharing_form.html" if is_htmx(request) else "teams/sharing.html"
    return render(request, template, context, status_code=status)


@router.get("/sharing/{kind}/{object_id}", name="sharing_page")
def sharing_page(
    request: Request, kind: str, obj: SharedDep, user: WebUser, session: SessionDep
) -> Response:
    """Show which teams the resource is shared with; its owner gets the form to change it."""
    return _render(request, user, session, kind, obj)


@router.post("/sharing/{kind}/{object_id}", name="sharing_submit")
def sharing_submit(
    request: Request,
    kind: str,
    obj: SharedDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Share the resource with the ticked teams (owner only; 403 for members)."""
    raw = [str(v) for v in form.getlist("team_id")]
    if not all(v.isdigit() for v in raw):
        raise NotFound("No such team.")
    teams.share(session=session, user=user, obj=obj, team_ids=[int(v) for v in raw])
    if is_htmx(request):
        return _render(request, user, session, kind, obj)
    target = request.url_for("sharing_page", kind=kind, object_id=obj.id)
    return see_other(target)

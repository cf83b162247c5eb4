"""The Teams page (create teams, members and roles) and the admin page for accounts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.accounts import admin
from app.accounts import service as users
from app.accounts.deps import WebManagedUserDep, WebUser
from app.errors import Invalid, RelevoError
from app.models import User
from app.teams import service
from app.teams.deps import WebOwnTeamDep, WebTeamDep
from app.vocabulary import TeamRole
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


def _teams(
    request: Request, user: User, session: Session, *, error: str | None = None, status: int = 200
) -> Response:
    teams = service.list_teams(session=session, user=user)
    members = service.members(session=session, team_ids=[t.id for t in teams])
    context = {
        "user": user,
        "teams": teams,
        "members": members,
        "roles": list(TeamRole),
        "error": error,
    }
    return render(request, "teams/teams.html", context, status_code=status)


def _back(request: Request) -> Response:
    return see_other(request.url_for("teams_page"))


@router.get("/teams", name="teams_page")
def teams_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show the user's teams with their members and the forms that manage them."""
    return _teams(request, user, session)


@router.post("/teams", name="team_create_submit")
def create_team(
    request: Request,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    name: Annotated[str, Form()] = "",
) -> Response:
    """Create a team owned by the user."""
    name = name.strip()
    if not name or len(name) > 200 or "\x00" in name:
        return _teams(
            request, user, session, error="A team needs a name (1 to 200 characters).", status=422
        )
    service.create_team(session=session, user=user, name=name)
    return _back(request)


@router.post("/teams/{team_id}/members", name="team_member_submit")
def put_member(
    request: Request,
    team: WebOwnTeamDep,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    email: Annotated[str, Form()] = "",
    role: Annotated[str, Form()] = "member",
) -> Response:
    """Add a member by email or change a member's role (owners only)."""
    if role not in set(TeamRole) or "\x00" in email:
        return _teams(request, user, session, error="Choose the role owner or member.", status=422)
    try:
        service.put_member(session=session, team=team, email=email, role=TeamRole(role))
    except RelevoError as exc:
        return _teams(request, user, session, error=exc.message, status=exc.status_code)
    return _back(request)


@router.post("/teams/{team_id}/members/{member_id}/remove", name="team_member_remove")
def remove_member(
    request: Request,
    team: WebTeamDep,
    member_id: int,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Remove a member (owners; anyone may leave). The last owner cannot go (409)."""
    try:
        service.remove_member(session=session, team=team, user_id=member_id, by=user)
    except RelevoError as exc:
        return _teams(request, user, session, error=exc.message, status=exc.status_code)
    return _back(request)


def _admin(
    request: Request, user: User, session: Session, *, error: str | None = None, status: int = 200
) -> Response:
    context = {"user": user, "accounts": admin.list_users(session=session), "error": error}
    return render(request, "accounts/admin_users.html", context, status_code=status)


@router.get("/admin/users", name="admin_users_page")
def admin_users_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show every account with forms to create, disable and reset (administrators only)."""
    admin.require_admin(user)
    return _admin(request, user, session)


@router.post("/admin/users", name="admin_user_create")
def admin_create_user(
    request: Request,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    email: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    is_admin: Annotated[str, Form()] = "",
) -> Response:
    """Create an account."""
    admin.require_admin(user)
    try:
        users.create_user(session=session, email=email, password=password, is_admin=bool(is_admin))
    except (Invalid, RelevoError) as exc:
        return _admin(request, user, session, error=exc.message, status=exc.status_code)
    return see_other(request.url_for("admin_users_page"))


@router.post("/admin/users/{user_id}", name="admin_user_update")
def admin_update_user(
    request: Request,
    target: WebManagedUserDep,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    action: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
) -> Response:
    """Disable, enable or reset the password of an account."""
    try:
        if action == "reset":
            admin.reset_password(session=session, user=target, password=password)
        elif action in ("disable", "enable"):
            admin.set_disabled(
                session=session, admin=user, user=target, disabled=action == "disable"
            )
        else:
            return _admin(request, user, session, error="Unknown action.", status=422)
    except RelevoError as exc:
        return _admin(request, user, session, error=exc.message, status=exc.status_code)
    return see_other(request.url_for("admin_users_page"))

"""The two page routes that delete a thing, written once for every kind that has them.

``GET <path>/delete``, named ``<noun>_delete_page``, asks first (the page of confirm.py);
its form posts to ``POST <path>/delete``, named ``<noun>_delete_submit``, which deletes
through the domain's service (who may is the service's to decide) and sends the browser on.
A domain's web module calls ``add_delete_routes`` where the two handlers would stand. This
module names no domain: the page's user and the thing's dependency come in as arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.web_common.confirm import DeleteConfirmation, confirm_page, gone
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.owned import route_handler

__all__ = ["Deletable", "Farewell", "add_delete_routes"]

T = TypeVar("T")


@dataclass(frozen=True)
class Deletable:
    """A kind of thing the pages delete.

    ``noun`` ("scorer") names the routes, is what the confirmation calls the thing and is the
    keyword ``delete`` takes it by (``delete(session=, user=, scorer=)``). ``path`` is the
    thing's ("/scorers/{scorer_id}"); ``user`` and ``item`` are ``Annotated`` dependencies:
    the page's user, and the thing loaded by the path's parameter (or 404).
    """

    noun: str
    path: str
    user: object
    item: object
    delete: Callable[..., None]


@dataclass(frozen=True)
class Farewell(Generic[T]):
    """What the confirmation says, and the route names of the pages around it.

    ``consequence`` is the sentence under the question, or a function of the session and the
    thing that writes it; ``back`` is the thing's page, ``after`` where the browser goes once
    the thing is deleted.
    """

    consequence: str | Callable[[Session, T], str]
    back: str
    after: str


def add_delete_routes(
    router: APIRouter, kind: Deletable, farewell: Farewell[T], docs: tuple[str, str]
) -> None:
    """Add the confirmation page and the delete of ``kind`` to ``router`` (``docs``: theirs)."""
    path = f"{kind.path}/delete"
    ask, delete = _confirm(kind, farewell, docs[0]), _delete(kind, farewell.after, docs[1])
    router.add_api_route(path, ask, methods=["GET"], name=f"{kind.noun}_delete_page")
    router.add_api_route(path, delete, methods=["POST"], name=f"{kind.noun}_delete_submit")


def _confirm(kind: Deletable, farewell: Farewell[T], doc: str) -> Callable[..., Response]:
    id_name = kind.path.rpartition("{")[2].rstrip("}")  # "scorer_id" of "/scorers/{scorer_id}"

    def handler(*, request: Request, user: Any, session: Session, **item: Any) -> Response:
        thing = item[kind.noun]
        said = farewell.consequence
        doomed = DeleteConfirmation(
            kind=kind.noun,
            name=thing.name,
            consequence=said if isinstance(said, str) else said(session, thing),
            action=str(request.url_for(f"{kind.noun}_delete_submit", **{id_name: thing.id})),
            back=str(request.url_for(farewell.back, **{id_name: thing.id})),
        )
        return confirm_page(request, user, doomed)

    params = {"request": Request, kind.noun: kind.item, "user": kind.user, "session": SessionDep}
    return route_handler(handler, f"confirm_{kind.noun}", doc, params)


def _delete(kind: Deletable, after: str, doc: str) -> Callable[..., Response]:
    def handler(
        *, request: Request, user: Any, session: Session, _csrf: None, **item: Any
    ) -> Response:
        kind.delete(session=session, user=user, **item)
        return gone(request, str(request.url_for(after)))

    params = {
        "request": Request,
        kind.noun: kind.item,
        "user": kind.user,
        "session": SessionDep,
        "_csrf": CsrfChecked,
    }
    return route_handler(handler, f"delete_{kind.noun}", doc, params)

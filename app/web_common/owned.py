"""The five API routes of a thing its users own and share, written once.

Search endpoints, scorers, judges and click logs each answer the same scaffolding: list what
the caller may see, create one (201), read one, change one, delete one (204). Who may do
what is their service's to decide (sharing, owner-only deletes); loading one or answering
404 is their ``*Dep`` (``owned()`` in app/accounts/deps.py). A domain's api module calls
``add_owned_routes`` with what it names, its schemas, its service functions and the routes'
docstrings; its other routes stay written out beside.

Each route is named as a written-out handler would be (``list_scorers``, ``get_scorer``,
``update_scorer``...), so its ``url_for`` name, OpenAPI operation id and summary are the
same, and its docstring (the OpenAPI description) is the domain's own. This module names no
domain: the caller's dependencies come in as arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import GenericAlias
from typing import Any, Generic, TypeVar

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.web_common.deps import SessionDep

__all__ = [
    "Owned",
    "OwnedSchemas",
    "OwnedService",
    "RouteDocs",
    "add_owned_routes",
    "route_handler",
]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Owned:
    """The thing's names and dependencies.

    ``noun`` ("scorer") names the routes (``get_scorer``) and is the keyword the service
    functions take the thing by (``scorer=``); ``plural`` names the list route. ``path`` is
    one thing's ("/scorers/{scorer_id}"); the list's is what comes before its last segment.
    ``user`` and ``item`` are ``Annotated`` dependencies: the caller, and the thing loaded by
    the path's parameter (or 404).
    """

    noun: str
    plural: str
    path: str
    user: object
    item: object


@dataclass(frozen=True)
class OwnedSchemas:
    """What the routes answer (``read``) and the bodies of create and update."""

    read: type[BaseModel]
    create: type[BaseModel]
    update: type[BaseModel]


@dataclass(frozen=True)
class OwnedService(Generic[T]):
    """The service functions the routes call (keyword-only, session first)."""

    to_read: Callable[[T], BaseModel]
    list_all: Callable[..., Iterable[T]]
    create: Callable[..., T]
    update: Callable[..., T]
    delete: Callable[..., None]


@dataclass(frozen=True)
class RouteDocs:
    """The docstring of each route: what OpenAPI shows as its description."""

    list: str
    create: str
    get: str
    update: str
    delete: str


def add_owned_routes(
    router: APIRouter,
    owned: Owned,
    schemas: OwnedSchemas,
    service: OwnedService[T],
    docs: RouteDocs,
) -> None:
    """Add the list, create, read, update and delete routes of ``owned`` to ``router``."""
    many = owned.path.rpartition("/")[0]
    read = schemas.read
    list_of = GenericAlias(list, (read,))
    add = router.add_api_route
    add(many, _list(owned, service, docs.list), methods=["GET"], response_model=list_of)
    create = _create(owned, schemas.create, service, docs.create)
    add(many, create, methods=["POST"], response_model=read, status_code=201)
    add(owned.path, _get(owned, service, docs.get), methods=["GET"], response_model=read)
    update = _update(owned, schemas.update, service, docs.update)
    add(owned.path, update, methods=["PATCH"], response_model=read)
    add(owned.path, _delete(owned, service, docs.delete), methods=["DELETE"], status_code=204)


def _list(owned: Owned, service: OwnedService[T], doc: str) -> Callable[..., object]:
    def handler(*, user: Any, session: Session) -> list[BaseModel]:
        return [service.to_read(x) for x in service.list_all(session=session, user=user)]

    params = {"user": owned.user, "session": SessionDep}
    return route_handler(handler, f"list_{owned.plural}", doc, params)


def _create(
    owned: Owned, body: type[BaseModel], service: OwnedService[T], doc: str
) -> Callable[..., object]:
    def handler(*, body: BaseModel, user: Any, session: Session) -> BaseModel:
        return service.to_read(service.create(session=session, user=user, body=body))

    params = {"body": body, "user": owned.user, "session": SessionDep}
    return route_handler(handler, f"create_{owned.noun}", doc, params)


def _get(owned: Owned, service: OwnedService[T], doc: str) -> Callable[..., object]:
    def handler(**item: T) -> BaseModel:
        return service.to_read(item[owned.noun])

    return route_handler(handler, f"get_{owned.noun}", doc, {owned.noun: owned.item})


def _update(
    owned: Owned, body: type[BaseModel], service: OwnedService[T], doc: str
) -> Callable[..., object]:
    def handler(*, body: BaseModel, user: Any, session: Session, **item: T) -> BaseModel:
        return service.to_read(service.update(session=session, user=user, body=body, **item))

    params = {owned.noun: owned.item, "body": body, "user": owned.user, "session": SessionDep}
    return route_handler(handler, f"update_{owned.noun}", doc, params)


def _delete(owned: Owned, service: OwnedService[T], doc: str) -> Callable[..., object]:
    def handler(*, user: Any, session: Session, **item: T) -> None:
        service.delete(session=session, user=user, **item)

    params = {owned.noun: owned.item, "user": owned.user, "session": SessionDep}
    return route_handler(handler, f"delete_{owned.noun}", doc, params)


def route_handler(
    handler: Callable[..., R], name: str, doc: str, params: dict[str, object]
) -> Callable[..., R]:
    """Return ``handler`` as FastAPI should see it: with this name, docstring and (keyword)
    parameters, ``params`` mapping each name to its annotation (a type or a dependency)."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter(n, keyword, annotation=a) for n, a in params.items()]
    # FastAPI reads a handler's parameters through inspect.signature, which honours this.
    handler.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    handler.__name__ = handler.__qualname__ = name
    handler.__doc__ = doc
    return handler

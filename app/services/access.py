"""Who may see what: the one place that decides ownership.

Team sharing extends `visible_owner_ids`; every route loads through `get_visible`.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from sqlalchemy.orm import Session

from app.errors import NotFound
from app.models import Book, Case, Scorer, SearchEndpoint, User


class Owned(Protocol):
    owner_id: int


class MaybeOwned(Protocol):
    @property
    def owner_id(self) -> int | None: ...


T = TypeVar("T")
MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL


def valid_id(value: int) -> bool:
    """Return whether a client-given id can name a row at all (others are simply not found)."""
    return 1 <= value <= MAX_ID


def visible_owner_ids(*, user: User) -> set[int]:
    """Return the owner ids whose things the user may see and change."""
    return {user.id}


def can_see(*, user: User, owner_id: int | None, shared_when_unowned: bool = False) -> bool:
    """Return whether the user may see a thing with this owner."""
    if owner_id is None:
        return shared_when_unowned
    return owner_id in visible_owner_ids(user=user)


def get_visible(
    *,
    session: Session,
    model: type[T],
    object_id: int,
    user: User,
    label: str,
    shared_when_unowned: bool = False,
) -> T:
    """Return the object when the user may see it; otherwise raise NotFound (404)."""
    obj = session.get(model, object_id) if valid_id(object_id) else None
    owner_id = getattr(obj, "owner_id", None) if obj is not None else None
    if obj is None or not can_see(
        user=user, owner_id=owner_id, shared_when_unowned=shared_when_unowned
    ):
        raise NotFound(f"No {label} with id {object_id}.")
    return obj


def visible_case(*, session: Session, user: User, case_id: int) -> Case:
    """Return the case when the user may see it, else raise NotFound."""
    return get_visible(session=session, model=Case, object_id=case_id, user=user, label="case")


def visible_endpoint(*, session: Session, user: User, endpoint_id: int) -> SearchEndpoint:
    """Return the search endpoint when the user may see it, else raise NotFound."""
    return get_visible(
        session=session,
        model=SearchEndpoint,
        object_id=endpoint_id,
        user=user,
        label="search endpoint",
    )


def visible_scorer(*, session: Session, user: User, scorer_id: int) -> Scorer:
    """Return the scorer when it is a preset or the user's own, else raise NotFound."""
    return get_visible(
        session=session,
        model=Scorer,
        object_id=scorer_id,
        user=user,
        label="scorer",
        shared_when_unowned=True,
    )


def visible_book(*, session: Session, user: User, book_id: int) -> Book:
    """Return the book when the user may see (and judge) it, else raise NotFound."""
    return get_visible(session=session, model=Book, object_id=book_id, user=user, label="book")

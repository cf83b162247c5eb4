"""Who may see what: the one place that decides ownership and team sharing.

A user may see (read, run, rate, edit) a case, scorer, search endpoint or book they own or
that is shared with a team they belong to; only the owner deletes it or changes its sharing.
Lists filter with `visible_clause`, single loads go through `get_visible`, owner-only actions
through `require_owner`. Everyone else gets 404, exactly as for a missing id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from sqlalchemy import ColumnElement, Select, Table, exists, false, or_, select
from sqlalchemy.orm import Session, joinedload, selectinload
from sqlalchemy.orm.interfaces import ORMOption

from app.errors import Forbidden, NotFound
from app.models import Book, Case, ClickLog, Judge, Scorer, SearchEndpoint, TeamMember, User
from app.models.clicks import click_log_teams
from app.models.judges import judge_teams
from app.models.teams import book_teams, case_teams, scorer_teams, search_endpoint_teams


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


Shareable = Case | Scorer | SearchEndpoint | Book | Judge | ClickLog

# Each shareable kind: its association table and the column naming the resource.
SHARE_TABLES: dict[type[Shareable], tuple[Table, str]] = {
    Case: (case_teams, "case_id"),
    Scorer: (scorer_teams, "scorer_id"),
    SearchEndpoint: (search_endpoint_teams, "search_endpoint_id"),
    Book: (book_teams, "book_id"),
    Judge: (judge_teams, "judge_id"),
    ClickLog: (click_log_teams, "click_log_id"),
}


def shared_ids(model: type[Shareable], *, user_id: int) -> Select[tuple[int]]:
    """Return the SELECT of the ids of this kind shared with any team the user belongs to."""
    table, column = SHARE_TABLES[model]
    return (
        select(table.c[column])
        .join(TeamMember, TeamMember.team_id == table.c.team_id)
        .where(TeamMember.user_id == user_id)
    )


def visible_clause(model: type[Shareable], *, user: User) -> ColumnElement[bool]:
    """Return the WHERE condition "the user owns it or it is shared with one of their teams"."""
    if user.is_disabled:
        return false()
    return or_(model.owner_id == user.id, model.id.in_(shared_ids(model, user_id=user.id)))


def visible_cases(*, session: Session, user: User) -> list[Case]:
    """Return the cases the user may see, newest first (their teams loaded)."""
    stmt = (
        select(Case)
        .where(visible_clause(Case, user=user))
        .options(selectinload(Case.teams))
        .order_by(Case.id.desc())
    )
    return list(session.scalars(stmt))


def is_shared_with(*, session: Session, obj: Shareable, user: User) -> bool:
    """Return whether the object is shared with a team the user belongs to (one query)."""
    table, column = SHARE_TABLES[type(obj)]
    found = session.scalar(
        select(
            exists()
            .where(table.c[column] == obj.id)
            .where(TeamMember.team_id == table.c.team_id, TeamMember.user_id == user.id)
        )
    )
    return bool(found)


def can_see(
    *, session: Session, user: User, obj: object, shared_when_unowned: bool = False
) -> bool:
    """Return whether the user may see (and use) the object."""
    if user.is_disabled:
        return False
    owner_id = getattr(obj, "owner_id", None)
    if owner_id is None:
        return shared_when_unowned
    if owner_id == user.id:
        return True
    return isinstance(
        obj, Case | Scorer | SearchEndpoint | Book | Judge | ClickLog
    ) and is_shared_with(session=session, obj=obj, user=user)


def require_owner(*, user: User, obj: Shareable, action: str) -> None:
    """Raise Forbidden (403) unless the user owns the (already visible) object.

    Built-in presets (no owner) pass here: their own read-only rule answers 409.
    """
    if obj.owner_id is not None and obj.owner_id != user.id:
        raise Forbidden(f"Only the owner of this {_label(obj)} may {action}.")


def _label(obj: Shareable) -> str:
    return {
        Case: "case",
        Scorer: "scorer",
        SearchEndpoint: "search endpoint",
        Book: "book",
        Judge: "judge",
        ClickLog: "click log",
    }[type(obj)]


def get_visible(
    *,
    session: Session,
    model: type[T],
    object_id: int,
    user: User,
    label: str,
    shared_when_unowned: bool = False,
    options: Sequence[ORMOption] = (),
) -> T:
    """Return the object when the user may see it; otherwise raise NotFound (404)."""
    obj = session.get(model, object_id, options=options) if valid_id(object_id) else None
    if obj is None or not can_see(
        session=session, user=user, obj=obj, shared_when_unowned=shared_when_unowned
    ):
        raise NotFound(f"No {label} with id {object_id}.")
    return obj


def visible_case(*, session: Session, user: User, case_id: int) -> Case:
    """Return the case when the user may see it, else raise NotFound."""
    # Nearly every case view needs its scorer: loaded in the same statement.
    return get_visible(
        session=session,
        model=Case,
        object_id=case_id,
        user=user,
        label="case",
        options=[joinedload(Case.scorer)],
    )


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


def visible(*, session: Session, user: User, kind: str, object_id: int) -> Shareable:
    """Return the case, scorer, endpoint or book named by ``kind`` when the user may see it."""
    if kind == "case":
        return visible_case(session=session, user=user, case_id=object_id)
    if kind == "scorer":
        return visible_scorer(session=session, user=user, scorer_id=object_id)
    if kind == "endpoint":
        return visible_endpoint(session=session, user=user, endpoint_id=object_id)
    if kind == "book":
        return visible_book(session=session, user=user, book_id=object_id)
    raise NotFound(f"Nothing called {kind!r} can be shared.")

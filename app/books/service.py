"""Books: create and change them, fill them with pairs, and record raters' judgements."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from sqlalchemy import and_, exists, func, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from app import access
from app.access import valid_id
from app.books.schemas import (
    BookCreate,
    BookRead,
    BookUpdate,
    JudgementPut,
    JudgementRead,
    PairIn,
    PairRead,
)
from app.clicks import read as click_reads
from app.errors import Conflict, Invalid, NotFound
from app.judges import run_views as judge_run_views
from app.models import Book, BookRater, Judgement, Pair, Query, RunQuery, Scorer, User
from app.models.base import utcnow
from app.runs import service as run_service
from app.scorers import service as scorer_service
from app.teams import service as teams

CHUNK = 500
# Raters numbered 0-62 have a bit in Pair.rater_bits (a signed 64-bit integer); later ones
# are looked up in the judgements instead.
SLOTS = 63


def list_books(*, session: Session, user: User) -> list[Book]:
    """Return the books the user may see, newest first."""
    stmt = (
        select(Book)
        .where(access.visible_clause(Book, user=user))
        .options(selectinload(Book.teams))
        .order_by(Book.id.desc())
    )
    return list(session.scalars(stmt))


def pair_counts(*, session: Session, book_ids: Sequence[int]) -> dict[int, int]:
    """Return how many pairs each of these books has."""
    if not book_ids:
        return {}
    stmt = (
        select(Pair.book_id, func.count()).where(Pair.book_id.in_(book_ids)).group_by(Pair.book_id)
    )
    counts: dict[int, int] = {book_id: 0 for book_id in book_ids}
    counts.update({book_id: count for book_id, count in session.execute(stmt)})
    return counts


def to_read(*, session: Session, book: Book) -> BookRead:
    """Return the API view of a book with its pair count."""
    count = pair_counts(session=session, book_ids=[book.id])[book.id]
    return BookRead.model_validate(book).model_copy(
        update={"pair_count": count, "team_ids": teams.team_ids(book)}
    )


def pairs_read(*, session: Session, book: Book) -> list[PairRead]:
    """Return the API view of the book's pairs, each with every rater's judgement."""
    by_judges = judge_run_views.judgements_by_pair(session=session, book_id=book.id)
    by_clicks = click_reads.judgements_by_pair(session=session, book_id=book.id)
    return [
        PairRead.model_validate(pair).model_copy(
            update={
                "judgements": [JudgementRead.model_validate(j) for j in judgements]
                + by_judges.get(pair.id, [])
                + by_clicks.get(pair.id, [])
            }
        )
        for pair, judgements in list_pairs(session=session, book=book)
    ]


def create_book(*, session: Session, user: User, body: BookCreate) -> Book:
    """Create a book owned by the user."""
    shared = teams.teams_for_sharing(session=session, user=user, team_ids=body.team_ids)
    book = Book(owner_id=user.id, name=body.name, scale=body.scale, scale_labels=body.scale_labels)
    book.teams = shared
    session.add(book)
    session.flush()
    return book


def update_book(*, session: Session, user: User, book: Book, body: BookUpdate) -> Book:
    """Rename a book, change its scale or (its owner only) who it is shared with; a scale that
    leaves judgements out is refused (409)."""
    teams.set_sharing(session=session, user=user, obj=book, team_ids=body.team_ids)
    changes = body.model_dump(exclude_unset=True, exclude={"team_ids"})
    scale = changes.get("scale")
    if scale is not None:
        outside = session.scalar(
            select(func.count())
            .select_from(Judgement)
            .where(
                Judgement.book_id == book.id,
                Judgement.rating.is_not(None),
                Judgement.rating.not_in(scale),
            )
        )
        if outside:
            raise Conflict(f"{outside} judgements have ratings that are not on the new scale.")
    for name, value in changes.items():
        if value is not None or name == "scale_labels":
            setattr(book, name, value)
    session.flush()
    return book


def delete_book(*, session: Session, user: User, book: Book) -> None:
    """Delete (its owner only) a book with its pairs and judgements."""
    access.require_owner(user=user, obj=book, action="delete it")
    session.delete(book)
    session.flush()


def add_pairs(*, session: Session, book: Book, pairs: Sequence[PairIn]) -> tuple[int, int]:
    """Upsert pairs by (query text, doc id); return (created, existing)."""
    unique: dict[tuple[str, str], PairIn] = {}
    for item in pairs:
        unique[(item.query_text, item.doc_id)] = item
    keys = list(unique)
    found: dict[tuple[str, str], Pair] = {}
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        stmt = select(Pair).where(
            Pair.book_id == book.id, tuple_(Pair.query_text, Pair.doc_id).in_(chunk)
        )
        found.update({(p.query_text, p.doc_id): p for p in session.scalars(stmt)})
    created = 0
    for key, item in unique.items():
        stored = found.get(key)
        if stored is None:
            session.add(
                Pair(
                    book_id=book.id,
                    query_text=item.query_text,
                    doc_id=item.doc_id,
                    position=item.position,
                    fields=item.fields,
                    information_need=item.information_need,
                )
            )
            created += 1
            continue
        if item.fields:
            stored.fields = item.fields
        if item.information_need is not None:
            stored.information_need = item.information_need
        if item.position is not None:
            stored.position = item.position
    session.flush()
    return created, len(unique) - created


def populate(
    *, session: Session, user: User, book: Book, case_id: int, depth: int
) -> tuple[int, int]:
    """Add the top-`depth` docs of every query of the latest finished run of one of the
    user's cases."""
    case = access.visible_case(session=session, user=user, case_id=case_id)
    run = run_service.latest_finished_run(session=session, case=case)
    if run is None:
        raise Conflict(
            f"Case {case.id} has no finished run yet: run it, then fill the book from it."
        )
    needs = dict(
        session.execute(
            select(Query.id, Query.information_need).where(Query.case_id == case.id)
        ).all()
    )
    rows = session.execute(
        select(RunQuery.query_id, RunQuery.text, RunQuery.docs)
        .where(RunQuery.run_id == run.id)
        .order_by(RunQuery.position, RunQuery.id)
    )
    adopt_scorer_labels(book=book, scorer=case.scorer)
    pairs: list[PairIn] = []
    for query_id, text, docs in rows:
        for doc in (docs or [])[:depth]:
            # Built without validation: the run stored these values already.
            pairs.append(
                PairIn.model_construct(
                    query_text=text,
                    doc_id=str(doc["id"])[:500],
                    fields=doc.get("fields") or {},
                    information_need=needs.get(query_id),
                    position=doc.get("rank"),
                )
            )
    return add_pairs(session=session, book=book, pairs=pairs)


def adopt_scorer_labels(*, book: Book, scorer: Scorer) -> None:
    """Give a book without grade names its case scorer's ("Perfect" rather than "3"), when
    every value of the book's scale is on the scorer's; the caller commits."""
    if book.scale_labels:
        return
    named = {
        entry.value: entry.label
        for entry in scorer_service.scale_entries(scorer)
        if entry.label != f"{entry.value:g}"
    }
    values = [float(v) for v in book.scale]
    if named and all(v in named for v in values):
        book.scale_labels = {f"{v:g}": named[v] for v in values}


def list_pairs(
    *, session: Session, book: Book, offset: int = 0, limit: int | None = None
) -> list[tuple[Pair, list[Judgement]]]:
    """Return the book's pairs in id order with their judgements."""
    stmt = select(Pair).where(Pair.book_id == book.id).order_by(Pair.id).offset(offset)
    pairs = list(session.scalars(stmt if limit is None else stmt.limit(limit)))
    by_pair: dict[int, list[Judgement]] = {p.id: [] for p in pairs}
    if pairs:
        judged = select(Judgement).where(Judgement.book_id == book.id)
        if limit is not None:
            judged = judged.where(Judgement.pair_id.in_(list(by_pair)))
        for judgement in session.scalars(judged.order_by(Judgement.user_id)):
            if judgement.pair_id in by_pair:
                by_pair[judgement.pair_id].append(judgement)
    return [(p, by_pair[p.id]) for p in pairs]


def get_pair(*, session: Session, book: Book, pair_id: int) -> Pair:
    """Return a pair of this book, or 404."""
    pair = session.get(Pair, pair_id) if valid_id(pair_id) else None
    if pair is None or pair.book_id != book.id:
        raise NotFound(f"Book {book.id} has no pair {pair_id}.")
    return pair


def check_judgement(book: Book, body: JudgementPut) -> None:
    """Raise Invalid (422) unless the judgement is a value of the scale or "can't tell"."""
    if body.unrateable:
        if body.rating is not None:
            raise Invalid("rating", 'A "can\'t tell" judgement has no rating: send null.')
        return
    scale = [float(v) for v in book.scale]
    if body.rating is None:
        raise Invalid("rating", "Give a rating from the scale, or unrateable: true.")
    if not math.isfinite(body.rating) or body.rating not in scale:
        values = ", ".join(f"{v:g}" for v in scale)
        raise Invalid("rating", f"Rating {body.rating:g} is not on the book's scale ({values}).")


def judge(
    *, session: Session, book: Book, pair_id: int, user: User, body: JudgementPut
) -> Judgement:
    """Record the user's judgement of one of the book's pairs, replacing their earlier one."""
    pair = get_pair(session=session, book=book, pair_id=pair_id)
    check_judgement(book, body)
    judgement = session.scalar(
        select(Judgement).where(Judgement.pair_id == pair.id, Judgement.user_id == user.id)
    )
    if judgement is None:
        judgement = Judgement(book_id=book.id, pair_id=pair.id, user_id=user.id)
        session.add(judgement)
        slot = rater_slot(session=session, book=book, user=user, create=True)
        bits = Pair.rater_bits.op("|")(1 << slot) if slot is not None and slot < SLOTS else None
        session.execute(
            update(Pair)
            .where(Pair.id == pair.id)
            .values(
                judgement_count=Pair.judgement_count + 1,
                **({"rater_bits": bits} if bits is not None else {}),
            )
        )
    judgement.rating = body.rating
    judgement.unrateable = body.unrateable
    judgement.updated_at = utcnow()
    session.flush()
    return judgement


def rater_slot(*, session: Session, book: Book, user: User, create: bool = False) -> int | None:
    """Return the user's rater number in the book (given on their first judgement)."""
    found = session.scalar(
        select(BookRater.slot).where(BookRater.book_id == book.id, BookRater.user_id == user.id)
    )
    if found is not None or not create:
        return found
    for _attempt in range(5):
        last = session.scalar(select(func.max(BookRater.slot)).where(BookRater.book_id == book.id))
        slot = 0 if last is None else last + 1
        try:
            with session.begin_nested():
                session.add(BookRater(book_id=book.id, user_id=user.id, slot=slot))
            return slot
        except IntegrityError:
            continue  # another rater took this number at the same moment
    raise Conflict("Too many raters joined this book at once; try again.")


def next_pair(
    *, session: Session, book: Book, user: User, skip: Collection[int] = ()
) -> Pair | None:
    """Return a pair the user has not judged, fewest judgements first (then oldest)."""
    stmt = (
        select(Pair).where(Pair.book_id == book.id).order_by(Pair.judgement_count, Pair.id).limit(1)
    )
    slot = rater_slot(session=session, book=book, user=user)
    if slot is not None and slot < SLOTS:
        stmt = stmt.where(Pair.rater_bits.op("&")(1 << slot) == 0)
    elif slot is not None:
        mine = exists().where(Judgement.pair_id == Pair.id, Judgement.user_id == user.id)
        stmt = stmt.where(~mine)
    if skip:
        stmt = stmt.where(Pair.id.not_in(list(skip)))
    return session.scalar(stmt)


def previous_pair(
    *, session: Session, book: Book, user: User, before: int | None = None
) -> Pair | None:
    """Return the pair the user judged last, or the one judged just before pair `before`."""
    stmt = select(Judgement.updated_at, Judgement.id).where(
        Judgement.book_id == book.id, Judgement.user_id == user.id
    )
    anchor = (
        session.execute(stmt.where(Judgement.pair_id == before)).first()
        if before is not None
        else None
    )
    query = select(Judgement.pair_id).where(
        Judgement.book_id == book.id, Judgement.user_id == user.id
    )
    if anchor is not None:
        at, judgement_id = anchor
        query = query.where(
            (Judgement.updated_at < at)
            | and_(Judgement.updated_at == at, Judgement.id < judgement_id)
        )
    pair_id = session.scalar(query.order_by(Judgement.updated_at.desc(), Judgement.id.desc()))
    return None if pair_id is None else session.get(Pair, pair_id)


def my_judgement(*, session: Session, pair: Pair, user: User) -> Judgement | None:
    """Return the user's judgement of a pair, if any."""
    return session.scalar(
        select(Judgement).where(Judgement.pair_id == pair.id, Judgement.user_id == user.id)
    )


def progress(*, session: Session, book: Book, user: User) -> tuple[int, int]:
    """Return (pairs the user has judged, pairs in the book)."""
    mine = session.scalar(
        select(func.count())
        .select_from(Judgement)
        .where(Judgement.book_id == book.id, Judgement.user_id == user.id)
    )
    total = session.scalar(select(func.count()).select_from(Pair).where(Pair.book_id == book.id))
    return int(mine or 0), int(total or 0)

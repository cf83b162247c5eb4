"""Export a book (CSV, Quepid's book JSON) and import Quepid's book format."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from pydantic import ValidationError
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.access import visible_clause
from app.books import service as book_service
from app.books.schemas import BookCreate, JudgementPut, PairIn
from app.books.service import check_judgement
from app.errors import Invalid
from app.models import Book, Judgement, Pair, Scorer, User
from app.scoring.quepid_scorers import shipped_scorer

MAX_IMPORT_PAIRS = 100_000


def _emails(session: Session, book: Book) -> dict[int, str]:
    stmt = (
        select(User.id, User.email)
        .join(Judgement, Judgement.user_id == User.id)
        .where(Judgement.book_id == book.id)
        .distinct()
    )
    return dict(session.execute(stmt).all())


def export_csv(*, session: Session, book: Book) -> str:
    """Return the book's judgements as CSV `query,docid,rating,rater` (rater = email)."""
    emails = _emails(session, book)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["query", "docid", "rating", "rater"])
    stmt = (
        select(Pair.query_text, Pair.doc_id, Judgement.rating, Judgement.user_id)
        .join(Judgement, Judgement.pair_id == Pair.id)
        .where(Pair.book_id == book.id)
        .order_by(Pair.id, Judgement.user_id)
    )
    for text, doc_id, rating, user_id in session.execute(stmt):
        writer.writerow([text, doc_id, "" if rating is None else f"{rating:g}", emails[user_id]])
    return out.getvalue()


def export_quepid(*, session: Session, book: Book) -> dict[str, Any]:
    """Return the book in the shape of Quepid's book export."""
    emails = _emails(session, book)
    pairs = []
    for pair, judgements in book_service.list_pairs(session=session, book=book):
        pairs.append(
            {
                "query_text": pair.query_text,
                "doc_id": pair.doc_id,
                "position": pair.position,
                # Quepid keeps a pair's document fields as JSON text.
                "document_fields": json.dumps(pair.fields, ensure_ascii=False),
                "information_need": pair.information_need,
                "judgements": [
                    {
                        "rating": j.rating,
                        "unrateable": j.unrateable,
                        "judge_later": False,
                        "user_email": emails[j.user_id],
                        "explanation": None,
                    }
                    for j in judgements
                ],
            }
        )
    labels = book.scale_labels or {f"{v:g}": f"{v:g}" for v in book.scale}
    return {
        "name": book.name,
        "show_rank": False,
        "support_implicit_judgements": False,
        "scorer": {
            "name": f"{book.name} scale",
            "scale": [_number(v) for v in book.scale],
            "scale_with_labels": labels,
        },
        "query_doc_pairs": pairs,
    }


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _plain(exc: ValidationError, where: tuple[str | int, ...] = ()) -> str:
    """Return pydantic's complaints as a person reads them: "path: what is wrong"."""
    parts = []
    for error in exc.errors():
        path = _dotted((*where, *error.get("loc", ())))
        message = str(error.get("msg", "is not valid")).removeprefix("Value error, ")
        parts.append(f"{path}: {message}" if path else message)
    return "; ".join(parts)


def _dotted(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _judged_values(data: dict[str, Any]) -> list[float]:
    """Return the distinct numeric ratings of the file's judgements, ascending."""
    values: set[float] = set()
    raw_pairs = data.get("query_doc_pairs")
    for raw in raw_pairs if isinstance(raw_pairs, list) else []:
        items = raw.get("judgements") if isinstance(raw, dict) else None
        for item in items if isinstance(items, list) else []:
            rating = item.get("rating") if isinstance(item, dict) else None
            if isinstance(rating, bool) or not isinstance(rating, int | float):
                continue
            if math.isfinite(rating) and not item.get("unrateable"):
                values.add(float(rating))
    return sorted(values)


def _scale_from_values(values: list[float]) -> list[float] | None:
    """Return a scale holding every value: whole numbers from the lowest to the highest
    (at least two), else the values themselves; None when there are none."""
    if not values:
        return None
    if all(v.is_integer() for v in values) and values[-1] - values[0] <= 10:
        low, high = int(values[0]), int(values[-1])
        return [float(v) for v in range(low, max(high, low + 1) + 1)]
    return values


def _named_scale(
    session: Session, user: User, name: Any
) -> tuple[list[float], dict[str, str] | None] | None:
    """Return the scale (and labels) of the scorer the file names: one of Quepid's shipped
    scorers, else a scorer of that name the user can see; None when there is none."""
    if not isinstance(name, str) or not name.strip():
        return None
    shipped = shipped_scorer(name)
    if shipped is not None:
        return [float(v) for v in shipped.scale], dict(shipped.labels) or None
    scorer = session.scalar(
        select(Scorer)
        .where(
            Scorer.name == name.strip(),
            or_(Scorer.owner_id.is_(None), visible_clause(Scorer, user=user)),
        )
        .order_by(Scorer.owner_id.is_not(None), Scorer.id)
        .limit(1)
    )
    if scorer is None:
        return None
    return [float(v) for v in scorer.scale], scorer.scale_labels


def _book_body(session: Session, user: User, data: dict[str, Any]) -> BookCreate:
    """Return the new book's name and scale: the file's scale, else its named scorer's (a
    real Quepid export names its scorer only), else one holding the judgements' ratings."""
    given = data.get("scorer")
    scorer: dict[str, Any] = given if isinstance(given, dict) else {}
    scale = scorer.get("scale") or data.get("scale")
    labels = scorer.get("scale_with_labels") or data.get("scale_with_labels")
    if not scale:
        named = _named_scale(session, user, scorer.get("name"))
        if named is not None:
            scale, labels = named[0], labels or named[1]
        else:
            scale = _scale_from_values(_judged_values(data))
    if not scale:
        raise Invalid(
            "scale",
            "The file gives no scale, names no scorer Relevo knows and has no ratings to "
            'take one from: add "scale": [0, 1, 2, 3] (the ratings allowed) to its scorer.',
        )
    if not isinstance(scale, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in scale
    ):
        raise Invalid("scale", "The book's scale must be a list of numbers, e.g. [0, 1, 2, 3].")
    try:
        return BookCreate.model_validate(
            {
                "name": data.get("name") or "Imported book",
                "scale": scale,
                "scale_labels": {str(k): str(v) for k, v in labels.items()}
                if isinstance(labels, dict)
                else None,
            }
        )
    except ValidationError as exc:
        raise Invalid("scale", f"The book is not valid: {_plain(exc)}.") from exc


def import_quepid(*, session: Session, user: User, data: Any) -> Book:
    """Create a book from Quepid's book format; every rater must have an account here."""
    if not isinstance(data, dict):
        raise Invalid("book", "Expected a JSON object in Quepid's book format.")
    body = _book_body(session, user, data)
    raw_pairs = data.get("query_doc_pairs") or []
    if not isinstance(raw_pairs, list) or len(raw_pairs) > MAX_IMPORT_PAIRS:
        raise Invalid("query_doc_pairs", f"Expected a list of at most {MAX_IMPORT_PAIRS} pairs.")
    probe = Book(scale=body.scale)
    pairs, judgements = _parse_pairs(raw_pairs, probe)
    users = _users(session, {email for _, email, _ in judgements})
    book = book_service.create_book(session=session, user=user, body=body)
    book_service.add_pairs(session=session, book=book, pairs=pairs)
    ids = {
        (p.query_text, p.doc_id): p.id
        for p in session.scalars(select(Pair).where(Pair.book_id == book.id))
    }
    seen: set[tuple[int, int]] = set()
    for key, email, judgement in judgements:
        pair_id, user_id = ids[key], users[email]
        if (pair_id, user_id) in seen:
            continue
        seen.add((pair_id, user_id))
        session.add(
            Judgement(
                book_id=book.id,
                pair_id=pair_id,
                user_id=user_id,
                rating=judgement.rating,
                unrateable=judgement.unrateable,
            )
        )
    session.flush()
    slots = {
        user_id: book_service.rater_slot(session=session, book=book, user=rater, create=True)
        for user_id, rater in _raters(session, {u for _, u in seen}).items()
    }
    counts: dict[int, int] = {}
    bits: dict[int, int] = {}
    for pair_id, user_id in seen:
        counts[pair_id] = counts.get(pair_id, 0) + 1
        slot = slots[user_id]
        if slot is not None and slot < book_service.SLOTS:
            bits[pair_id] = bits.get(pair_id, 0) | (1 << slot)
    for pair in session.scalars(select(Pair).where(Pair.book_id == book.id)):
        pair.judgement_count = counts.get(pair.id, 0)
        pair.rater_bits = bits.get(pair.id, 0)
    session.flush()
    return book


def _parse_pairs(
    raw_pairs: list[Any], book: Book
) -> tuple[list[PairIn], list[tuple[tuple[str, str], str, JudgementPut]]]:
    pairs: list[PairIn] = []
    judgements: list[tuple[tuple[str, str], str, JudgementPut]] = []
    for index, raw in enumerate(raw_pairs):
        where = ("query_doc_pairs", index)
        try:
            fields = raw.get("document_fields") or {}
            if isinstance(fields, str):
                fields = json.loads(fields)
            pair = PairIn(
                query_text=str(raw.get("query_text", "")),
                doc_id=str(raw.get("doc_id", "")),
                fields=fields if isinstance(fields, dict) else {"value": fields},
                information_need=raw.get("information_need"),
                position=raw.get("position"),
            )
        except ValidationError as exc:
            raise Invalid(where, f"Pair {index} is not valid: {_plain(exc, where)}.") from exc
        except (AttributeError, ValueError) as exc:
            # Text that is no JSON object in document_fields, or a pair that is no object.
            raise Invalid(
                where,
                f"Pair {index} is not valid: {_dotted(where)} must be an object whose "
                "document_fields is an object (or an object as JSON text).",
            ) from exc
        pairs.append(pair)
        for number, item in enumerate(raw.get("judgements") or []):
            parsed = _judgement(item, book, (*where, "judgements", number))
            if parsed is not None:
                judgements.append(((pair.query_text, pair.doc_id), *parsed))
    return pairs, judgements


def _judgement(
    item: Any, book: Book, where: tuple[str | int, ...]
) -> tuple[str, JudgementPut] | None:
    if not isinstance(item, dict) or not isinstance(item.get("user_email"), str):
        raise Invalid(where, "A judgement needs the rater's user_email.")
    if item.get("judge_later") and item.get("rating") is None:
        return None  # "judge later" is no judgement yet
    unrateable = bool(item.get("unrateable"))
    try:
        body = JudgementPut(
            rating=None if unrateable else item.get("rating"), unrateable=unrateable
        )
        check_judgement(book, body)
    except ValidationError as exc:
        raise Invalid(where, f"Judgement is not valid: {_plain(exc, where)}.") from exc
    except Invalid as exc:
        raise Invalid(where, exc.message) from exc
    return item["user_email"], body


def _users(session: Session, emails: set[str]) -> dict[str, int]:
    found = dict(session.execute(select(User.email, User.id).where(User.email.in_(emails))).all())
    missing = sorted(emails - set(found))
    if missing:
        raise Invalid(
            "query_doc_pairs",
            f"Raters without an account here: {', '.join(missing[:10])}; create them first.",
        )
    return found


def _raters(session: Session, user_ids: set[int]) -> dict[int, User]:
    users = session.scalars(select(User).where(User.id.in_(user_ids)).order_by(User.id))
    return {u.id: u for u in users}

"""Books: query-doc pairs judged by many raters, and which book a case's ratings come from."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

if TYPE_CHECKING:
    from app.models.teams import Team

from app.models.base import Base, JsonType, utcnow


class Book(Base):
    __tablename__ = "books"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    scale: Mapped[list[Any]] = mapped_column(default=list)
    scale_labels: Mapped[dict[str, Any] | None] = mapped_column(JsonType, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The teams whose members may use it (only the owner changes this).
    teams: Mapped[list[Team]] = relationship(secondary="book_teams", order_by="Team.id")


class Pair(Base):
    """One query-doc pair of a book, with the doc's fields as they were judged.

    `judgement_count` and `rater_bits` (bit n set: the book's rater number n judged it)
    are kept with every judgement written, so that the next pair for a rater ("fewest
    judgements first", not judged by them) is one walk of the (book, count, id, bits)
    index with no lookup per pair, however many pairs the rater has already judged.
    """

    __tablename__ = "book_pairs"
    __table_args__ = (
        UniqueConstraint("book_id", "query_text", "doc_id"),
        Index("ix_book_pairs_book_count", "book_id", "judgement_count", "id", "rater_bits"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    query_text: Mapped[str] = mapped_column(String(1000))
    doc_id: Mapped[str] = mapped_column(String(500))
    position: Mapped[int | None] = mapped_column(default=None)
    fields: Mapped[dict[str, Any]] = mapped_column(default=dict)
    information_need: Mapped[str | None] = mapped_column(Text, default=None)
    judgement_count: Mapped[int] = mapped_column(default=0)
    rater_bits: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class BookRater(Base):
    """A rater's number within a book: which bit of `Pair.rater_bits` is theirs."""

    __tablename__ = "book_raters"
    __table_args__ = (UniqueConstraint("book_id", "slot"),)

    book_id: Mapped[int] = mapped_column(
        ForeignKey("books.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    slot: Mapped[int]


class Judgement(Base):
    """One rater's judgement of one pair: a rating, or "can't tell" (unrateable)."""

    __tablename__ = "judgements"
    __table_args__ = (
        UniqueConstraint("pair_id", "user_id"),
        Index("ix_judgements_book_user", "book_id", "user_id", "updated_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    pair_id: Mapped[int] = mapped_column(ForeignKey("book_pairs.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    rating: Mapped[float | None] = mapped_column(Float, default=None)
    unrateable: Mapped[bool] = mapped_column(default=False)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class CaseBookSync(Base):
    """Where a case's ratings come from: the book and the method of its last sync."""

    __tablename__ = "case_book_syncs"

    case_id: Mapped[int] = mapped_column(
        ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True
    )
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), index=True)
    method: Mapped[str] = mapped_column(String(10))
    rater_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    # With the "rater" method: "user", "judge" or "clicks" (a click model), and the judge's
    # or click model's name when synced (kept should it be deleted later).
    rater_kind: Mapped[str | None] = mapped_column(String(10), default=None)
    rater_name: Mapped[str | None] = mapped_column(String(300), default=None)
    synced_at: Mapped[datetime] = mapped_column(default=utcnow)

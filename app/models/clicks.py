"""Click logs: search behaviour in the UBI 1.3.0 format (queries and the events they drew)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column, relationship

if TYPE_CHECKING:
    from app.models.teams import Team

from app.models.base import Base, utcnow

click_log_teams = Table(
    "click_log_teams",
    Base.metadata,
    Column(
        "click_log_id", Integer, ForeignKey("click_logs.id", ondelete="CASCADE"), primary_key=True
    ),
    Column(
        "team_id", Integer, ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True, index=True
    ),
)


class ClickLog(Base):
    """A named store of UBI queries and events, owned and shared like a book."""

    __tablename__ = "click_logs"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    # Whether the events' `ordinal` counts from 0 or 1; ranks are stored 1-based.
    position_base: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    teams: Mapped[list[Team]] = relationship(secondary="click_log_teams", order_by="Team.id")
    # Pulls from engines' UBI indexes: "<endpoint id>:<index>" -> the latest timestamp pulled
    # (epoch ms); a pull without `since` starts there. The last pull's outcome, for the page.
    pull_cursors: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    last_pull: Mapped[dict[str, Any] | None] = mapped_column(default=None)


class UbiQuery(Base):
    """One UBI query record; `key` is its `query_id` (or a digest of a record without one)."""

    __tablename__ = "ubi_queries"
    __table_args__ = (
        UniqueConstraint("click_log_id", "key"),
        Index("ix_ubi_queries_log_text", "click_log_id", "user_query"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    click_log_id: Mapped[int] = mapped_column(ForeignKey("click_logs.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(100))
    user_query: Mapped[str] = mapped_column(Text)
    application: Mapped[str | None] = mapped_column(String(100), default=None)
    client_id: Mapped[str | None] = mapped_column(String(100), default=None)
    timestamp: Mapped[datetime | None] = mapped_column(default=None)
    # None is SQL NULL (a query that showed nothing), not JSON null: "IS NOT NULL" finds hits.
    hit_ids: Mapped[list[Any] | None] = mapped_column(
        JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql"), default=None
    )
    # How many hits the search showed (len of query_response_hit_ids; 0: a zero-result
    # search), None when the record did not say.
    hit_count: Mapped[int | None] = mapped_column(default=None)


class UbiEvent(Base):
    """One UBI event; `digest` (of the whole record) makes a resent event a no-op."""

    __tablename__ = "ubi_events"
    __table_args__ = (
        UniqueConstraint("click_log_id", "digest"),
        Index("ix_ubi_events_log_query", "click_log_id", "query_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    click_log_id: Mapped[int] = mapped_column(ForeignKey("click_logs.id", ondelete="CASCADE"))
    digest: Mapped[str] = mapped_column(String(64))
    action_name: Mapped[str] = mapped_column(String(100))
    timestamp: Mapped[datetime]
    query_id: Mapped[str | None] = mapped_column(String(100), default=None)
    client_id: Mapped[str | None] = mapped_column(String(100), default=None)
    session_id: Mapped[str | None] = mapped_column(String(100), default=None)
    application: Mapped[str | None] = mapped_column(String(100), default=None)
    user_query: Mapped[str | None] = mapped_column(Text, default=None)
    object_id: Mapped[str | None] = mapped_column(String(256), default=None)
    # The 1-based rank, whatever base the sender counted from.
    rank: Mapped[int | None] = mapped_column(default=None)


class ClickRater(Base):
    """A click model run over a log, as one rater of a book (kind "clicks" in agreement)."""

    __tablename__ = "click_raters"
    __table_args__ = (UniqueConstraint("book_id", "click_log_id", "model"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), index=True)
    click_log_id: Mapped[int] = mapped_column(
        ForeignKey("click_logs.id", ondelete="CASCADE"), index=True
    )
    model: Mapped[str] = mapped_column(String(10))
    name: Mapped[str] = mapped_column(String(300))
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ClickJudgement(Base):
    """A click model's rating of one pair of a book, with the numbers it came from."""

    __tablename__ = "click_judgements"
    __table_args__ = (
        UniqueConstraint("rater_id", "pair_id"),
        Index("ix_click_judgements_book", "book_id", "rater_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("click_raters.id", ondelete="CASCADE"))
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    pair_id: Mapped[int] = mapped_column(ForeignKey("book_pairs.id", ondelete="CASCADE"))
    rating: Mapped[float] = mapped_column(Float)
    impressions: Mapped[int]
    clicks: Mapped[int]
    expected_clicks: Mapped[float] = mapped_column(Float)
    estimate: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float, default=None)

"""Cases, their tries, queries and ratings."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, utcnow
from app.search.types import DEFAULT_FIELD_SPEC

if TYPE_CHECKING:
    from app.models.endpoints import SearchEndpoint
    from app.models.scorers import Scorer
    from app.models.teams import Team
    from app.models.users import User


class Case(Base):
    __tablename__ = "cases"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    scorer_id: Mapped[int] = mapped_column(ForeignKey("scorers.id", ondelete="RESTRICT"))
    current_try_number: Mapped[int] = mapped_column(default=1)
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Extra scorers scored with the primary one in every run (ids, in display order).
    metric_scorer_ids: Mapped[list[Any]] = mapped_column(default=list, server_default="[]")
    # "mean" or "weighted_mean" (by each query's weight): how query scores make a case's.
    aggregate: Mapped[str] = mapped_column(String(16), default="mean", server_default="mean")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The teams whose members may use it (only the owner changes this).
    teams: Mapped[list[Team]] = relationship(secondary="case_teams", order_by="Team.id")

    owner: Mapped[User] = relationship()
    scorer: Mapped[Scorer] = relationship()
    tries: Mapped[list[Try]] = relationship(
        back_populates="case",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="Try.number",
    )


class Try(Base):
    """One numbered iteration of a case's search settings; never edited once runs use it."""

    __tablename__ = "tries"
    __table_args__ = (UniqueConstraint("case_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    number: Mapped[int]
    search_endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("search_endpoints.id", ondelete="RESTRICT"), index=True
    )
    query_template: Mapped[str] = mapped_column(Text)
    knobs: Mapped[dict[str, Any]] = mapped_column(default=dict)
    field_spec: Mapped[str] = mapped_column(Text, default=DEFAULT_FIELD_SPEC)
    rows: Mapped[int] = mapped_column(default=10)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    case: Mapped[Case] = relationship(back_populates="tries")
    search_endpoint: Mapped[SearchEndpoint] = relationship()


class Query(Base):
    __tablename__ = "queries"
    __table_args__ = (
        UniqueConstraint("case_id", "text"),
        Index("ix_queries_case_position", "case_id", "position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(String(1000))
    position: Mapped[int] = mapped_column(default=0)
    notes: Mapped[str | None] = mapped_column(Text, default=None)
    information_need: Mapped[str | None] = mapped_column(Text, default=None)
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Free-form segment labels ("head", "brand") and the query's weight (e.g. its traffic).
    tags: Mapped[list[Any]] = mapped_column(default=list, server_default="[]")
    weight: Mapped[float] = mapped_column(Float, default=1.0, server_default="1")
    # A query sampled from a click log: its inclusion probability under the sample's design.
    inclusion_probability: Mapped[float | None] = mapped_column(Float, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Rating(Base):
    __tablename__ = "ratings"
    __table_args__ = (UniqueConstraint("query_id", "doc_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    doc_id: Mapped[str] = mapped_column(String(500))
    rating: Mapped[float] = mapped_column(Float)
    rated_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # The name of the API key of the agent that set it last, else None.
    agent: Mapped[str | None] = mapped_column(String(200), default=None)

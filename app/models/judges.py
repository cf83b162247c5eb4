"""Judges: language models that rate a book's pairs, their runs, judgements and cache."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

if TYPE_CHECKING:
    from app.models.teams import Team

from app.models.base import Base, utcnow
from app.secret_box import register_sealed_column, seal_on_flush

# `relevo secrets rotate` re-seals these with the newest key.
register_sealed_column("judges", "api_key_sealed")
register_sealed_column("judges", "headers", kind="json_values")

# The statuses of a run under way (app.judges.runs.ACTIVE), as SQL for the partial index.
ACTIVE_WHERE = "status IN ('queued', 'running')"

judge_teams = Table(
    "judge_teams",
    Base.metadata,
    Column("judge_id", Integer, ForeignKey("judges.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "team_id", Integer, ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True, index=True
    ),
)


class Judge(Base):
    """A language model configured to rate pairs: where it is, how to ask it, what it costs."""

    __tablename__ = "judges"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    provider: Mapped[str] = mapped_column(String(20))
    base_url: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
    # Secrets, sealed (app.secret_box): written by the owner, sent only to base_url's host.
    api_key_sealed: Mapped[str | None] = mapped_column(Text, default=None)
    # Header name -> sealed value: the names stay readable, the values do not.
    headers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    prompt: Mapped[str | None] = mapped_column(Text, default=None)
    temperature: Mapped[float] = mapped_column(Float, default=0.0)
    max_output_tokens: Mapped[int] = mapped_column(default=512)
    requests_per_minute: Mapped[int] = mapped_column(default=60)
    tokens_per_minute: Mapped[int] = mapped_column(default=0)
    max_concurrency: Mapped[int] = mapped_column(default=4)
    price_input_per_mtok: Mapped[float | None] = mapped_column(Float, default=None)
    price_output_per_mtok: Mapped[float | None] = mapped_column(Float, default=None)
    timeout_s: Mapped[float] = mapped_column(Float, default=30.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    teams: Mapped[list[Team]] = relationship(secondary="judge_teams", order_by="Team.id")


# Set in clear by the service; the flush seals them for their row.
seal_on_flush(Judge, "api_key_sealed", "headers")


class JudgeRun(Base):
    """One pass of a judge over (some of) a book's pairs, with its counters and budget."""

    __tablename__ = "judge_runs"
    __table_args__ = (
        Index("ix_judge_runs_book", "book_id", "id"),
        # At most one run under way per judge, however many starts race: the database says
        # so (the service turns the refusal into a 409), on SQLite and PostgreSQL alike.
        Index(
            "uq_judge_runs_one_active",
            "judge_id",
            unique=True,
            sqlite_where=text(ACTIVE_WHERE),
            postgresql_where=text(ACTIVE_WHERE),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    judge_id: Mapped[int] = mapped_column(ForeignKey("judges.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    status: Mapped[str] = mapped_column(String(12), default="queued")
    pairs_mode: Mapped[str] = mapped_column(String(10), default="unjudged")
    pair_ids: Mapped[list[Any]] = mapped_column(default=list)
    budget_usd: Mapped[float | None] = mapped_column(Float, default=None)
    budget_tokens: Mapped[int | None] = mapped_column(default=None)
    pairs_total: Mapped[int] = mapped_column(default=0)
    judged: Mapped[int] = mapped_column(default=0)
    cached: Mapped[int] = mapped_column(default=0)
    failed: Mapped[int] = mapped_column(default=0)
    tokens_in: Mapped[int] = mapped_column(default=0)
    tokens_out: Mapped[int] = mapped_column(default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str | None] = mapped_column(Text, default=None)
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    # The name of the API key of the agent that started it (over MCP), else None.
    agent: Mapped[str | None] = mapped_column(String(200), default=None)
    # The worst case of the calls under way, written before each call is sent and settled
    # with its result: after a crash, what is left here was possibly billed and counts as
    # spent, so the recorded spend is never below what the provider charged.
    reserved_usd: Mapped[float] = mapped_column(Float, default=0.0)
    reserved_tokens_in: Mapped[int] = mapped_column(default=0)
    reserved_tokens_out: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    # Written with every batch (and every half second) by the process executing it: a
    # "running" run whose heartbeat stopped was left by a process that is gone.
    heartbeat_at: Mapped[datetime | None] = mapped_column(default=None)


class JudgeFailure(Base):
    """A pair a judge run could not rate, and why."""

    __tablename__ = "judge_failures"
    __table_args__ = (UniqueConstraint("run_id", "pair_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("judge_runs.id", ondelete="CASCADE"))
    pair_id: Mapped[int] = mapped_column(ForeignKey("book_pairs.id", ondelete="CASCADE"))
    judge_id: Mapped[int] = mapped_column(ForeignKey("judges.id", ondelete="CASCADE"), index=True)
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class JudgeJudgement(Base):
    """A judge's rating of one pair, with its provenance (one per judge and pair)."""

    __tablename__ = "judge_judgements"
    __table_args__ = (
        UniqueConstraint("pair_id", "judge_id"),
        Index("ix_judge_judgements_book_judge", "book_id", "judge_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    pair_id: Mapped[int] = mapped_column(ForeignKey("book_pairs.id", ondelete="CASCADE"))
    judge_id: Mapped[int] = mapped_column(ForeignKey("judges.id", ondelete="CASCADE"))
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("judge_runs.id", ondelete="SET NULL"), default=None
    )
    rating: Mapped[float | None] = mapped_column(Float, default=None)
    unrateable: Mapped[bool] = mapped_column(default=False)
    explanation: Mapped[str | None] = mapped_column(Text, default=None)
    model: Mapped[str] = mapped_column(String(200))
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    temperature: Mapped[float] = mapped_column(Float, default=0.0)
    tokens_in: Mapped[int] = mapped_column(default=0)
    tokens_out: Mapped[int] = mapped_column(default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    cached: Mapped[bool] = mapped_column(default=False)
    raw_reply: Mapped[str | None] = mapped_column(Text, default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class JudgeCacheEntry(Base):
    """A model's answer for one (owner, provider, base URL, model, prompt, pair, scale): reused,
    not re-bought; the key hashes all of them, and the owner is kept to read only one's own."""

    __tablename__ = "judge_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    rating: Mapped[float | None] = mapped_column(Float, default=None)
    explanation: Mapped[str | None] = mapped_column(Text, default=None)
    tokens_in: Mapped[int] = mapped_column(default=0)
    tokens_out: Mapped[int] = mapped_column(default=0)
    raw_reply: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class JudgeTrial(Base):
    """The result of a judge's *Test on N pairs* (app.judges.trial), kept so that the test
    answers with a redirect to a page showing it: a reload shows it again without asking
    the judge (and paying) again. Each user keeps the latest few per judge."""

    __tablename__ = "judge_trials"

    id: Mapped[int] = mapped_column(primary_key=True)
    judge_id: Mapped[int] = mapped_column(ForeignKey("judges.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    result: Mapped[dict[str, Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

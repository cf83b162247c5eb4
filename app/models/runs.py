"""Runs: one execution of a case, and what each query returned and scored."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Float, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, JsonType, utcnow
from app.vocabulary import QueryStatus, RunStatus

if TYPE_CHECKING:
    from app.models.cases import Case
    from app.models.scorers import Scorer


def _default_trigger(context: Any) -> str:
    return "sweep" if context.get_current_parameters().get("sweep_id") else "user"


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_case_created", "case_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    try_number: Mapped[int]
    scorer_id: Mapped[int | None] = mapped_column(
        ForeignKey("scorers.id", ondelete="SET NULL"), default=None
    )
    status: Mapped[RunStatus] = mapped_column(default=RunStatus.QUEUED)
    explain: Mapped[bool] = mapped_column(default=False)
    case_score: Mapped[float | None] = mapped_column(Float, default=None)
    # What the run scored when it finished, and with which scorer: never changed afterwards
    # (case_score and scorer_id follow re-scoring with today's ratings and scorer).
    recorded_score: Mapped[float | None] = mapped_column(Float, default=None)
    recorded_scorer_id: Mapped[int | None] = mapped_column(
        ForeignKey("scorers.id", ondelete="SET NULL"), default=None
    )
    # The case's aggregate ("mean" or "weighted_mean") recorded_score and recorded_metrics
    # averaged the queries with when the run finished (None: finished before it was recorded).
    recorded_aggregate: Mapped[str | None] = mapped_column(String(20), default=None)
    total: Mapped[int] = mapped_column(default=0)
    done: Mapped[int] = mapped_column(default=0)
    scored: Mapped[int] = mapped_column(default=0)
    unscored: Mapped[int] = mapped_column(default=0)
    errors: Mapped[int] = mapped_column(default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    # Written every few seconds by the process executing the run (see Settings.run_lease_s).
    heartbeat_at: Mapped[datetime | None] = mapped_column(default=None)
    # The mark of the execution that owns the run (see pipeline.RunPlan.lease).
    lease: Mapped[str | None] = mapped_column(String(32), default=None)
    # Knob values that override the try's for this run (a sweep's combination), or None.
    knobs: Mapped[dict[str, Any] | None] = mapped_column(JsonType, default=None)
    sweep_id: Mapped[int | None] = mapped_column(
        ForeignKey("sweeps.id", ondelete="SET NULL"), index=True, default=None
    )
    # A run executed by workers is split into this many chunks (None: run in-process), and
    # lists the chunks whose results are committed; it has finished when all of them are.
    chunks: Mapped[int | None] = mapped_column(default=None)
    chunks_done: Mapped[list[Any] | None] = mapped_column(JsonType, default=None)
    # What started it: "user", "api", "schedule", "sweep", "apply" or "agent" (a sweep's
    # runs say so by default).
    trigger: Mapped[str] = mapped_column(
        String(10), default=_default_trigger, server_default="user"
    )
    # The case's extra metric scorers when the run was created (None: none, or older run),
    # and their case scores when it finished ([{scorer_id, name, case_score, scored}]),
    # never changed afterwards, like recorded_score.
    metric_scorer_ids: Mapped[list[Any] | None] = mapped_column(JsonType, default=None)
    recorded_metrics: Mapped[list[Any] | None] = mapped_column(JsonType, default=None)
    # A draft: the query template this run searched with instead of its try's (an agent's
    # proposed try). Such a run never speaks for the case (app.cases.case_runs.case_run).
    query_template: Mapped[str | None] = mapped_column(Text, default=None)
    # The name of the API key of the agent that started it (trigger "agent"), else None.
    agent: Mapped[str | None] = mapped_column(String(200), default=None)

    case: Mapped[Case] = relationship()
    scorer: Mapped[Scorer | None] = relationship(foreign_keys=[scorer_id])
    recorded_scorer: Mapped[Scorer | None] = relationship(foreign_keys=[recorded_scorer_id])


class RunQuery(Base):
    """One query's outcome in a run.

    The ranked docs are kept as one JSON list per query: they are always read and
    re-scored together and never looked up one by one, so a row per doc would only
    multiply writes on large cases.
    """

    __tablename__ = "run_queries"
    __table_args__ = (
        Index("ix_run_queries_run_position", "run_id", "position"),
        Index("ix_run_queries_run_query", "run_id", "query_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    query_id: Mapped[int | None] = mapped_column(
        ForeignKey("queries.id", ondelete="SET NULL"), index=True, default=None
    )
    text: Mapped[str] = mapped_column(String(1000))
    position: Mapped[int] = mapped_column(default=0)
    status: Mapped[QueryStatus]
    score: Mapped[float | None] = mapped_column(Float, default=None)
    raw_score: Mapped[float | None] = mapped_column(Float, default=None)
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    num_found: Mapped[int | None] = mapped_column(default=None)
    duration_ms: Mapped[float | None] = mapped_column(Float, default=None)
    # [{"id", "rank", "fields", "rating", "explain"?}]: "rating" is the doc's rating when
    # the run (or its latest re-score) scored it; pages read the current ratings instead.
    docs: Mapped[list[Any]] = mapped_column(default=list)
    log: Mapped[list[Any]] = mapped_column(default=list)
    # Every metric's score of this query: {str(scorer_id): score or None}, the primary
    # included (None on rows of runs older than metrics).
    metric_scores: Mapped[dict[str, Any] | None] = mapped_column(JsonType, default=None)

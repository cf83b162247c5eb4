"""Sweeps: a grid of knob values run as ordinary runs of a case."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow
from app.vocabulary import RunStatus


class Sweep(Base):
    """One grid search; each combination is a Run with ``sweep_id`` and its ``knobs``."""

    __tablename__ = "sweeps"

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    try_number: Mapped[int]
    status: Mapped[RunStatus] = mapped_column(default=RunStatus.QUEUED)
    # {"knob": [values, ...]} as asked; the case's other knobs as they were at the start.
    grid: Mapped[dict[str, Any]] = mapped_column(default=dict)
    base_knobs: Mapped[dict[str, Any]] = mapped_column(default=dict)
    total: Mapped[int] = mapped_column(default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    # The name of the API key of the agent that started it, else None.
    agent: Mapped[str | None] = mapped_column(String(200), default=None)

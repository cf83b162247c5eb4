"""Per-endpoint limits shared by every worker: concurrency slots and request-rate slots."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base


class EngineSlot(Base):
    """One of an engine's ``max_concurrency`` request slots, held by one request at a time.

    A holder that dies leaves its slot to expire (``expires_at``), so a killed worker never
    keeps an engine's capacity.
    """

    __tablename__ = "engine_slots"

    engine_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    slot: Mapped[int] = mapped_column(primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(64), default=None)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)


class EngineRate(Base):
    """When an engine's next request may start (``60 / requests_per_minute`` apart)."""

    __tablename__ = "engine_rates"

    engine_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    next_at: Mapped[datetime]

"""Scorers: built-in metrics with parameters, or a user's JavaScript."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

if TYPE_CHECKING:
    from app.models.teams import Team

from app.models.base import Base, JsonType, utcnow
from app.vocabulary import ScorerKind


class Scorer(Base):
    __tablename__ = "scorers"

    id: Mapped[int] = mapped_column(primary_key=True)
    # NULL owner: a built-in preset, visible to everyone and read-only.
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True, default=None
    )
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[ScorerKind]
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    code: Mapped[str | None] = mapped_column(Text, default=None)
    scale: Mapped[list[Any]] = mapped_column(default=list)
    scale_labels: Mapped[dict[str, Any] | None] = mapped_column(JsonType, default=None)
    max_score: Mapped[float] = mapped_column(default=100.0)
    # JavaScript only: "relevo" or "quepid" (see SCORING.md, "Quepid environment").
    environment: Mapped[str] = mapped_column(String(16), default="relevo", server_default="relevo")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The teams whose members may use it (only the owner changes this).
    teams: Mapped[list[Team]] = relationship(secondary="scorer_teams", order_by="Team.id")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    @property
    def is_builtin_preset(self) -> bool:
        """Return whether this is a shared preset rather than a user's scorer."""
        return self.owner_id is None

"""Search endpoints: where a case sends its queries."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

if TYPE_CHECKING:
    from app.models.teams import Team

from app.models.base import Base, utcnow
from app.secret_box import register_sealed_column, seal_on_flush
from app.vocabulary import Engine, HttpMethod


class SearchEndpoint(Base):
    __tablename__ = "search_endpoints"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    engine: Mapped[Engine]
    url: Mapped[str] = mapped_column(Text)
    method: Mapped[HttpMethod] = mapped_column(default=HttpMethod.GET)
    # Secrets: written by the owner, sent to the engine, never returned by the API; sealed
    # at rest (app/secret_box/): header values and basic auth are stored encrypted.
    headers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    basic_auth: Mapped[str | None] = mapped_column(Text, default=None)
    timeout_s: Mapped[float] = mapped_column(default=10.0)
    requests_per_minute: Mapped[int] = mapped_column(default=0)
    max_concurrency: Mapped[int] = mapped_column(default=8)
    # searchapi only: JavaScript defining docsMapper(data) and numberOfResultsMapper(data).
    mapper_code: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The teams whose members may use it (only the owner changes this).
    teams: Mapped[list[Team]] = relationship(secondary="search_endpoint_teams", order_by="Team.id")


# `relevo secrets rotate` re-seals these with the newest key.
register_sealed_column("search_endpoints", "headers", kind="json_values")
register_sealed_column("search_endpoints", "basic_auth")
# Every writer (service, Quepid import, tests) sets them in clear; the flush seals them.
seal_on_flush(SearchEndpoint, "headers", "basic_auth")

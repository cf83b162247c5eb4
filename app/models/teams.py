"""Teams, their members, and which teams each shareable resource is shared with."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, ForeignKey, Integer, String, Table
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow
from app.vocabulary import TeamRole


class Team(Base):
    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TeamMember(Base):
    __tablename__ = "team_members"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[TeamRole]
    added_at: Mapped[datetime] = mapped_column(default=utcnow)


def _share_table(name: str, resource_table: str, resource_column: str) -> Table:
    """Return the association table (resource id, team id) of one shareable kind."""
    return Table(
        name,
        Base.metadata,
        Column(
            resource_column,
            Integer,
            ForeignKey(f"{resource_table}.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        Column(
            "team_id",
            Integer,
            ForeignKey("teams.id", ondelete="CASCADE"),
            primary_key=True,
            index=True,
        ),
    )


case_teams = _share_table("case_teams", "cases", "case_id")
scorer_teams = _share_table("scorer_teams", "scorers", "scorer_id")
search_endpoint_teams = _share_table(
    "search_endpoint_teams", "search_endpoints", "search_endpoint_id"
)
book_teams = _share_table("book_teams", "books", "book_id")

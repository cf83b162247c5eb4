"""Declarative base and shared column helpers."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, DateTime, Enum, MetaData
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase

from app.vocabulary import Engine, HttpMethod, QueryStatus, RunStatus, ScorerKind, TeamRole

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JsonType = JSON().with_variant(JSONB(), "postgresql")


def word_column(vocabulary: type[StrEnum], length: int) -> Enum:
    """Return a column type that stores a vocabulary's values as plain VARCHAR text."""
    # No CHECK constraint and no native ENUM: adding a word must not need a table rewrite.
    return Enum(
        vocabulary,
        native_enum=False,
        create_constraint=False,
        length=length,
        values_callable=lambda words: [word.value for word in words],
    )


def utcnow() -> datetime:
    """Return the current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: dict[Any, Any] = {  # noqa: RUF012 -- SQLAlchemy reads this class attribute
        datetime: DateTime(timezone=True),
        dict[str, Any]: JsonType,
        list[Any]: JsonType,
        RunStatus: word_column(RunStatus, 12),
        QueryStatus: word_column(QueryStatus, 10),
        Engine: word_column(Engine, 20),
        HttpMethod: word_column(HttpMethod, 4),
        ScorerKind: word_column(ScorerKind, 40),
        TeamRole: word_column(TeamRole, 10),
    }

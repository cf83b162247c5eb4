"""Answers of ratings import and export."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ImportResult(BaseModel):
    """What a ratings import did, or with ``preview`` would do."""

    preview: bool
    lines: int = Field(description="rating lines read (blank lines not counted)")
    queries_created: int
    ratings_set: int
    ratings_unchanged: int
    duplicates: int = Field(description="lines naming a (query, doc) already seen: last wins")
    new_queries: list[str] = Field(description="the first 20 query texts that become queries")

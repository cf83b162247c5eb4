"""Answers of ratings import and export."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.cases.schemas import CaseRead


class ImportResult(BaseModel):
    """What a ratings import did, or with ``preview`` would do."""

    preview: bool
    lines: int = Field(description="rating lines read (blank lines not counted)")
    queries_created: int
    ratings_set: int
    ratings_unchanged: int
    duplicates: int = Field(description="lines naming a (query, doc) already seen: last wins")
    new_queries: list[str] = Field(description="the first 20 query texts that become queries")
    query_match: str | None = Field(
        default=None,
        description='TREC: how QIDs were matched to queries: "id", "text" or "id and text"',
    )
    qids_by_id: int = Field(default=0, description="TREC: QIDs that are query ids of the case")
    qids_by_text: int = Field(default=0, description="TREC: QIDs matched by query text")


class QuepidCaseImported(CaseRead):
    """The case a Quepid case export became, and what the import had to say about it."""

    warnings: list[str] = Field(
        description="what could not be carried over as it was (e.g. an unknown scorer)"
    )
    queries_created: int
    ratings_set: int
    search_endpoint_created: bool = Field(
        description="false when an endpoint of yours with the same engine and URL was reused"
    )
    scorer_created: bool = Field(
        description="false when an identical scorer of yours (or the default) was used"
    )

"""Result files: the ranked lists a ``static`` search endpoint answers with."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base


class StaticResult(Base):
    """One line of an uploaded result file: a doc returned for a query, with its score.

    Ranking is by ``score`` descending, ties by ``doc_id`` descending (byte order), the way
    trec_eval ranks a run; a CSV's ``rank`` is stored as ``score = -rank``.
    """

    __tablename__ = "static_results"
    __table_args__ = (Index("ix_static_results_endpoint_query", "endpoint_id", "query_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("search_endpoints.id", ondelete="CASCADE"))
    # The query as the file names it: its text (CSV) or its TREC QID (an id or a text).
    query_key: Mapped[str] = mapped_column(Text)
    doc_id: Mapped[str] = mapped_column(String(500))
    score: Mapped[float] = mapped_column(Float)
    fields: Mapped[dict[str, Any] | None] = mapped_column(default=None)

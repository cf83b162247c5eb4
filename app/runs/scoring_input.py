"""The one builder of a stored run's scoring input: its rankings with the current ratings.

Re-scoring a run, a query's row after a rating, a try of a scorer on the latest run, the
case's judgement coverage: each scores what a run stored (its docs, hits and text) with the
ratings and options as they are now. ``stored_inputs`` loads those once for the queries;
``StoredInputs.input_of`` makes a row's ``QueryInput``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Case, Query, RunQuery
from app.queries.service import ratings_of
from app.scoring import QueryInput
from app.scoring.types import StoredDocs

__all__ = ["StoredInputs", "stored_input", "stored_inputs"]


@dataclass(frozen=True)
class StoredInputs:
    """The current ratings and options of some queries of a case, to score stored rows."""

    ratings: Mapping[int, Mapping[str, float]]  # query id → doc id → rating
    query_options: Mapping[int, Mapping[str, Any]]
    case_options: Mapping[str, Any]

    def ratings_of(self, row: RunQuery) -> Mapping[str, float]:
        """The current ratings of the row's query (none when it is not among the loaded)."""
        return self.ratings.get(row.query_id or 0, {})

    def input_of(self, row: RunQuery) -> QueryInput:
        """The scoring input of the row's stored ranking with the current ratings."""
        options = self.query_options.get(row.query_id or 0) or {}
        return stored_input(row, self.ratings_of(row), options, self.case_options)


def stored_inputs(
    *,
    session: Session,
    case: Case,
    query_ids: Sequence[int],
    query_options: Mapping[int, Mapping[str, Any]] | None = None,
) -> StoredInputs:
    """Load the current ratings of these queries of the case, and their options unless given
    (a caller that holds the queries passes theirs: no look-up then)."""
    if query_options is None:
        query_options = dict(
            session.execute(select(Query.id, Query.options).where(Query.id.in_(query_ids))).all()
        )
    return StoredInputs(
        ratings=ratings_of(session=session, query_ids=query_ids),
        query_options=query_options,
        case_options=case.options or {},
    )


def stored_input(
    row: RunQuery,
    ratings: Mapping[str, float],
    query_options: Mapping[str, Any],
    case_options: Mapping[str, Any],
) -> QueryInput:
    """Return the scoring input of a stored ranking with the given (current) ratings."""
    return QueryInput(
        docs=StoredDocs(row.docs).as_sequence(),
        ratings=ratings,
        num_found=row.num_found,
        query_options=query_options,
        case_options=case_options,
        text=row.text,
    )

"""One query's results from two runs side by side, with moved, new and dropped docs marked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.compare.rows import stored_rows, top_docs
from app.compare.schemas import DocMark, QuerySideBySide, SideDoc
from app.compare.stats import query_overlap
from app.models import Case, Scorer
from app.queries import service as query_service
from app.queries.service import ratings_of
from app.runs import service as run_service
from app.runs.stored_results import doc_title, effective_knobs, field_spec_of
from app.scorers import service as scorer_service
from app.search import FieldSpec

__all__ = ["side_by_side"]


def side_by_side(
    *, session: Session, case: Case, query_id: int, base_id: int, other_id: int
) -> QuerySideBySide:
    """Return the top k of one query in two runs of the case (404 for another case's)."""
    query = query_service.get_query(session=session, case=case, query_id=query_id)
    base = run_service.get_run(session=session, case=case, run_id=base_id)
    other = run_service.get_run(session=session, case=case, run_id=other_id)
    scorer = session.get(Scorer, case.scorer_id)
    assert scorer is not None  # the foreign key is RESTRICT
    k = scorer_service.scorer_k(
        scorer, rows=case_service.current_try(session=session, case=case).rows
    )
    ratings = ratings_of(session=session, query_ids=[query.id])[query.id]
    base_top = top_docs(stored_rows(session, base.id, query.id).get(query.id), k)
    other_top = top_docs(stored_rows(session, other.id, query.id).get(query.id), k)
    base_spec = field_spec_of(session=session, case=case, run=base)
    other_spec = field_spec_of(session=session, case=case, run=other)
    knobs = effective_knobs(session=session, case_id=case.id, runs=[base, other])
    return QuerySideBySide(
        case_id=case.id,
        query_id=query.id,
        text=query.text,
        k=k,
        base_run_id=base.id,
        other_run_id=other.id,
        base_try_number=base.try_number,
        other_try_number=other.try_number,
        base_knobs=knobs.get(base.id) or None,
        other_knobs=knobs.get(other.id) or None,
        base_docs=_marked(base_top, other_top, base_spec, ratings, missing="dropped"),
        other_docs=_marked(other_top, base_top, other_spec, ratings, missing="new"),
        overlap=query_overlap(base_top, other_top),
    )


def _marked(
    mine: Mapping[str, Mapping[str, Any]],
    theirs: Mapping[str, Mapping[str, Any]],
    spec: FieldSpec,
    ratings: Mapping[str, float],
    *,
    missing: DocMark,
) -> list[SideDoc]:
    result = []
    for doc_id, doc in mine.items():
        rank = int(doc["rank"])
        other = theirs.get(doc_id)
        other_rank = None if other is None else int(other["rank"])
        mark: DocMark = (
            missing if other_rank is None else ("same" if other_rank == rank else "moved")
        )
        result.append(
            SideDoc(
                id=doc_id,
                title=doc_title(doc, spec),
                rank=rank,
                rating=ratings.get(doc_id),
                mark=mark,
                other_rank=other_rank,
            )
        )
    return result

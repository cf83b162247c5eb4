"""One query's results: its ranked docs from the latest finished run, with current ratings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from app.cases.tries import get_try
from app.models import Case, Query, Run, RunQuery, Try
from app.queries import service as query_service
from app.queries.pages.schemas import DocField, QueryResults, ResultDoc
from app.queries.schemas import QueryRead
from app.queries.service import ratings_of
from app.runs import service as run_service
from app.runs.stored_results import doc_title, latest_row, shown_text, spec_of
from app.scorers import service as scorer_service
from app.scorers.schemas import ScaleEntry
from app.search import FieldSpec

__all__ = ["query_results", "result_doc", "results_of"]

IMAGE_PREFIXES = ("http://", "https://", "/")


def query_results(*, session: Session, case: Case, query: Query) -> QueryResults:
    """Return one query's ranked docs from the latest finished run with current ratings."""
    run = run_service.latest_finished_run(session=session, case=case)
    row = latest_row(session=session, run=run, query=query)
    ratings = ratings_of(session=session, query_ids=[query.id])[query.id]
    return results_of(session=session, case=case, query=query, run=run, row=row, ratings=ratings)


def results_of(
    *,
    session: Session,
    case: Case,
    query: Query,
    run: Run | None,
    row: RunQuery | None,
    ratings: Mapping[str, float],
    raters: Mapping[str, str | None] | None = None,
    chosen: Try | None = None,
) -> QueryResults:
    """Return one query's results from a run row and ratings the caller has loaded already.

    ``raters`` (doc id → rater email) and ``chosen`` (the run's try) save their look-ups.
    """
    base = _no_results(case, query)
    if run is None or row is None:
        return base
    chosen = _run_try(session, case, run, chosen)
    spec = spec_of(chosen)
    k = scorer_service.scorer_k(case.scorer, rows=chosen.rows)
    docs = [result_doc(d, spec, ratings) for d in row.docs or []]
    docs = _with_raters(session, query, docs, raters)
    docs, off_scale = _mark_off_scale(docs, base.scale)
    return base.model_copy(
        update={
            **_row_fields(run, row),
            "unrated_top_k": sum(1 for d in docs[:k] if d.rating is None),
            "docs": docs,
            "off_scale": off_scale,
            "rated_not_returned": len(set(ratings) - {d.id for d in docs}),
        }
    )


def _row_fields(run: Run, row: RunQuery) -> dict[str, Any]:
    """Return what the run's row says of the query: its status, score, hits and error."""
    return {
        "run_id": run.id,
        "status": row.status,
        "score": row.score,
        "num_found": row.num_found,
        "reason": row.reason,
        "error": row.error,
    }


def _no_results(case: Case, query: Query) -> QueryResults:
    """Return a query's page data before any run: no docs, only the scorer's scale."""
    return QueryResults(
        case_id=case.id,
        query=QueryRead.model_validate(query),
        run_id=None,
        status=None,
        score=None,
        num_found=None,
        reason=None,
        error=None,
        unrated_top_k=None,
        docs=[],
        scale=scorer_service.scale_entries(case.scorer),
    )


def _run_try(session: Session, case: Case, run: Run, chosen: Try | None) -> Try:
    """Return the run's try: ``chosen`` when it is that one, else looked up (once serves both
    the field spec and the top k)."""
    if chosen is not None and chosen.number == run.try_number:
        return chosen
    return get_try(session=session, case=case, number=run.try_number)


def _with_raters(
    session: Session,
    query: Query,
    docs: list[ResultDoc],
    raters: Mapping[str, str | None] | None,
) -> list[ResultDoc]:
    """Return the docs with who rated each (looked up when not given and any is rated)."""
    if raters is None and any(d.rating is not None for d in docs):
        raters = _raters_of(session, query)
    if not raters:
        return docs
    return [d.model_copy(update={"rated_by": raters.get(d.id)}) for d in docs]


def _raters_of(session: Session, query: Query) -> dict[str, str | None]:
    """Return who rated each of the query's docs: doc id → rater email."""
    return {
        rating.doc_id: email
        for rating, _user_id, email in query_service.ratings_with_raters(
            session=session, query=query
        )
    }


def _mark_off_scale(
    docs: list[ResultDoc], scale: Sequence[ScaleEntry]
) -> tuple[list[ResultDoc], list[str]]:
    """Return the docs, those rated off the scorer's scale marked, and those docs' ids."""
    on_scale = {entry.value for entry in scale}
    off_scale = [d.id for d in docs if d.rating is not None and d.rating not in on_scale]
    if off_scale:
        docs = [d.model_copy(update={"off_scale": d.id in off_scale}) for d in docs]
    return docs, off_scale


def result_doc(doc: Mapping[str, Any], spec: FieldSpec, ratings: Mapping[str, float]) -> ResultDoc:
    """Return a stored doc ({id, rank, fields, explain}) as shown, with its current rating."""
    fields: Mapping[str, Any] = doc.get("fields") or {}
    images = [
        str(fields[name])
        for name in (spec.thumb_field, spec.image_field)
        if name
        and isinstance(fields.get(name), str)
        and str(fields[name]).startswith(IMAGE_PREFIXES)
    ]
    shown = [
        DocField(name=name, value=shown_text(fields[name]))
        for name in spec.sub_fields
        if name in fields and name != spec.title_field
    ]
    doc_id = str(doc.get("id"))
    return ResultDoc(
        id=doc_id,
        rank=int(doc.get("rank") or 0),
        title=doc_title(doc, spec),
        fields=shown,
        images=images,
        rating=ratings.get(doc_id),
        explain=doc.get("explain"),
    )

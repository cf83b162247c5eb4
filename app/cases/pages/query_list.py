"""A case's query list: one page of its queries with their latest scores, sparklines and
unrated counts, sorted and filtered (text, tag), for the case page and its partial."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.cases.history_schemas import QueryScorePoint
from app.cases.pages import history as history_service
from app.cases.pages.metric_panel import tag_query_ids
from app.cases.pages.schemas import PER_PAGE, QueryList, QueryRow, QuerySort
from app.models import Case, Query, Run, RunQuery
from app.queries.service import ratings_of
from app.runs import service as run_service
from app.runs.metrics import metric_defs, metric_ids, scores_of_row
from app.scorers import service as scorer_service
from app.vocabulary import QueryStatus

__all__ = ["QUERY_SORT_LABELS", "case_query_list", "query_list"]

QUERY_SORT_LABELS: dict[QuerySort, str] = {
    "position": "Position",
    "score": "Score, lowest first",
    "score_desc": "Score, highest first",
    "text": "Text",
}


def case_query_list(
    *,
    session: Session,
    case: Case,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    tag: str = "",
    metric: int | None = None,
) -> QueryList:
    """Return one page of the case's query list against its latest finished run."""
    current = case_service.current_try(session=session, case=case)
    k = scorer_service.scorer_k(case.scorer, rows=current.rows)
    latest = run_service.latest_finished_run(session=session, case=case)
    return query_list(
        session=session,
        case=case,
        run=latest,
        k=k,
        sort=sort,
        q=q,
        page=page,
        tag=tag,
        metric=metric,
    )


def _sort_order(sort: QuerySort, metric: Any = None) -> list[Any]:
    # Columns and expressions mixed: SQLAlchemy's own order_by takes them as Any-like.
    by_position: list[Any] = [Query.position, Query.id]
    score: Any = RunQuery.score if metric is None else metric
    if sort == "score":
        return [score.is_(None), score, *by_position]
    if sort == "score_desc":
        return [score.is_(None), score.desc(), *by_position]
    if sort == "text":
        return [func.lower(Query.text), Query.id]
    return by_position


def query_list(
    *,
    session: Session,
    case: Case,
    run: Run | None,
    k: int,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    per_page: int = PER_PAGE,
    tag: str = "",
    metric: int | None = None,
) -> QueryList:
    """Return one page of the case's queries with their latest scores and unrated counts.

    Four statements whatever the case's size: the count, the page's rows, the page's
    ranked doc ids, and the page's ratings.
    """
    wanted = Query.case_id == case.id
    if q.strip():
        wanted = wanted & Query.text.icontains(q.strip(), autoescape=True)
    if tag:
        wanted = wanted & Query.id.in_(tag_query_ids(session=session, case=case, tag=tag))
    if run is None or metric == run.scorer_id or metric not in metric_ids(run):
        metric = None  # the primary (or no run): its score column sorts
    total = session.scalar(select(func.count()).select_from(Query).where(wanted)) or 0
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page), pages)
    run_id = run.id if run is not None else -1
    order = _sort_order(sort, None if metric is None else _metric_column(metric))
    rows = session.execute(
        _page_statement(wanted, run_id, order).limit(per_page).offset((page - 1) * per_page)
    ).all()
    ids = [row.id for row in rows]
    unrated = _unrated_counts(session=session, run_id=run_id, query_ids=ids, k=k)
    histories = history_service.score_histories(session=session, case_id=case.id, query_ids=ids)
    items = [_query_row(row, run, unrated, histories) for row in rows]
    return QueryList(
        items=items,
        sort=sort,
        q=q,
        page=page,
        per_page=per_page,
        total=total,
        pages=pages,
        tag=tag,
        metric=metric,
        metric_names=(
            {}
            if run is None
            else {
                str(m.scorer_id): m.name for m in metric_defs(session=session, ids=metric_ids(run))
            }
        ),
    )


def _page_statement(wanted: Any, run_id: int, order: list[Any]) -> Any:
    """Return the SELECT of the queries with their row in the run (if any), in order."""
    return (
        select(
            Query.id,
            Query.text,
            Query.position,
            Query.notes,
            Query.information_need,
            RunQuery.status,
            RunQuery.score,
            RunQuery.num_found,
            RunQuery.error,
            Query.tags,
            Query.weight,
            RunQuery.metric_scores,
        )
        .outerjoin(RunQuery, (RunQuery.query_id == Query.id) & (RunQuery.run_id == run_id))
        .where(wanted)
        .order_by(*order)
    )


def _query_row(
    row: Any,
    run: Run | None,
    unrated: dict[int, int],
    histories: dict[int, list[QueryScorePoint]],
) -> QueryRow:
    return QueryRow(
        id=row.id,
        text=row.text,
        position=row.position,
        status=row.status,
        score=row.score,
        num_found=row.num_found,
        # An errored query has no unrated count to speak of: its error says what happened.
        unrated_top_k=None if row.status == QueryStatus.ERROR else unrated.get(row.id),
        error=row.error,
        notes=row.notes,
        information_need=row.information_need,
        history=histories.get(row.id, []),
        tags=list(row.tags or []),
        weight=row.weight if row.weight is not None else 1.0,
        metric_scores=_metric_scores(run, row),
    )


def _metric_column(scorer_id: int) -> Any:
    """Return a query row's score under one metric, as a number SQL can sort."""
    return RunQuery.metric_scores[str(scorer_id)].as_float()


def _metric_scores(run: Run | None, row: Any) -> dict[str, float | None]:
    if run is None or row.status is None:
        return {}
    scores = scores_of_row(run.scorer_id, row.status, row.score, row.metric_scores)
    return {str(k): v for k, v in scores.items()}


def _unrated_counts(
    *, session: Session, run_id: int, query_ids: Sequence[int], k: int
) -> dict[int, int]:
    if not query_ids or run_id < 0:
        return {}
    ranked = session.execute(
        select(RunQuery.query_id, RunQuery.docs).where(
            RunQuery.run_id == run_id, RunQuery.query_id.in_(query_ids)
        )
    ).all()
    ratings = ratings_of(session=session, query_ids=query_ids)
    result: dict[int, int] = {}
    for query_id, docs in ranked:
        if query_id is None:
            continue
        rated = ratings.get(query_id, {})
        result[query_id] = sum(1 for d in (docs or [])[:k] if d.get("id") not in rated)
    return result

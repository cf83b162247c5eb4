"""Judgement coverage of a case's latest finished run under the current ratings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.cases.coverage_schemas import CaseCoverage, QueryCoverage, RateNext
from app.models import Case, Query, RunQuery, Scorer
from app.runs import service as run_service
from app.runs.scoring_input import stored_inputs
from app.runs.stored_results import doc_title, field_spec_of
from app.scorers import service as scorer_service
from app.scorers.config import config_of
from app.scoring import case_score, score_queries
from app.scoring.coverage import bands, rating_impacts
from app.search import FieldSpec
from app.vocabulary import QueryStatus

__all__ = ["RATE_NEXT", "case_coverage"]

RATE_NEXT = 50
# Each candidate costs two scorings: enough for the list, bounded on huge cases.
CANDIDATES = 2_000


def case_coverage(*, session: Session, case: Case) -> CaseCoverage:
    """Return unrated counts, score bands and the ratings that matter most, per query and case."""
    scorer = session.get(Scorer, case.scorer_id)
    assert scorer is not None  # the foreign key is RESTRICT
    config = config_of(scorer)
    k = scorer_service.scorer_k(
        scorer, rows=case_service.current_try(session=session, case=case).rows
    )
    run = run_service.latest_finished_run(session=session, case=case)
    rows = [] if run is None else _answered_rows(session, run.id)
    ids = [row.query_id for row in rows if row.query_id is not None]
    texts = dict(session.execute(select(Query.id, Query.text).where(Query.id.in_(ids))).all())
    loaded = stored_inputs(session=session, case=case, query_ids=ids)
    inputs = [loaded.input_of(row) for row in rows]
    current = score_queries(config, inputs)
    band_list = bands(config, inputs, k)
    scored = sum(o.status == QueryStatus.SCORED for o in current)
    impacts = rating_impacts(config, inputs, k, scored_queries=scored, limit=CANDIDATES)
    spec = field_spec_of(session=session, case=case, run=run) if run is not None else None
    queries = [
        QueryCoverage(
            query_id=row.query_id or 0,
            text=texts.get(row.query_id or 0, row.text),
            status=outcome.status,
            score=outcome.score,
            unrated=len(band.unrated),
            unrated_ids=band.unrated,
            score_min=band.low,
            score_max=band.high,
        )
        for row, outcome, band in zip(rows, current, band_list, strict=True)
    ]
    return CaseCoverage(
        case_id=case.id,
        run_id=None if run is None else run.id,
        k=k,
        scale_min=min(config.scale),
        scale_max=max(config.scale),
        case_score=case_score(current),
        case_score_min=_mean([b.low for b in band_list]),
        case_score_max=_mean([b.high for b in band_list]),
        unrated=sum(q.unrated for q in queries),
        queries_with_unrated=sum(q.unrated > 0 for q in queries),
        queries=sorted(queries, key=lambda q: (-q.unrated, q.text)),
        rate_next=[
            RateNext(
                query_id=rows[i.query_index].query_id or 0,
                text=queries[i.query_index].text,
                doc_id=i.doc_id,
                title=_title(rows[i.query_index].docs, i.doc_id, spec),
                rank=i.rank,
                points=i.points,
            )
            for i in impacts[:RATE_NEXT]
        ],
    )


def _answered_rows(session: Session, run_id: int) -> list[RunQuery]:
    stmt = (
        select(RunQuery)
        .where(RunQuery.run_id == run_id, RunQuery.query_id.is_not(None))
        .order_by(RunQuery.position, RunQuery.id)
    )
    return [r for r in session.scalars(stmt) if r.status != QueryStatus.ERROR or r.docs]


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _title(docs: Sequence[Mapping[str, Any]], doc_id: str, spec: FieldSpec | None) -> str | None:
    doc = next((d for d in docs if str(d.get("id")) == doc_id), None)
    return None if doc is None or spec is None else doc_title(doc, spec)

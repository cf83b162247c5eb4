"""Compare two runs, or a run with the current ratings, judged by the same current ratings.

Both stored rankings are re-scored in memory with the case's current scorer and ratings, so
a comparison is fair and never changes a stored run (nothing here writes to the database).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.models import Case, Query, Run, RunQuery, Scorer
from app.schemas.compare import (
    Change,
    CompareCounts,
    CompareSide,
    CompareSort,
    DocChange,
    QueryComparison,
    RunComparison,
)
from app.scoring import Outcome, ScorerConfig, case_score, score_queries
from app.scoring.types import Status
from app.search import FieldSpecError, parse_field_spec
from app.services import cases as case_service
from app.services import queries as query_service
from app.services import runs as run_service
from app.services.pages import scorer_k
from app.services.scorers import config_of

__all__ = ["compare_by_ids", "compare_runs"]

# Two scores this close are the same score: re-scoring one ranking twice is exact, but a
# metric may sum in a different order when a doc moves within the top.
SAME = 1e-9
STORED_STATUSES: dict[str, Status] = {"scored": "scored", "unscored": "unscored"}


@dataclass(frozen=True)
class _QueryInfo:
    text: str
    position: int
    options: Mapping[str, Any]


@dataclass(frozen=True)
class _Side:
    """One side of a comparison: its stored rows and their outcomes, by query id."""

    run: Run
    rows: Mapping[int, RunQuery]
    outcomes: Mapping[int, Outcome]
    title_field: str | None
    current_ratings: bool


def compare_by_ids(
    *, session: Session, case: Case, base_id: int, other_id: int | None, sort: CompareSort
) -> RunComparison:
    """Return the comparison of two runs of the case given by id (404 for another case's)."""
    base_run = run_service.get_run(session=session, case=case, run_id=base_id)
    other_run = (
        None
        if other_id is None
        else run_service.get_run(session=session, case=case, run_id=other_id)
    )
    return compare_runs(
        session=session, case=case, base_run=base_run, other_run=other_run, sort=sort
    )


def compare_runs(
    *,
    session: Session,
    case: Case,
    base_run: Run,
    other_run: Run | None,
    sort: CompareSort = "delta",
) -> RunComparison:
    """Return per-query score changes from base to other under the current ratings.

    With no other run, "other" is the base run re-scored with the current ratings and
    "base" keeps its stored scores.
    """
    for run in (base_run, other_run):
        if run is not None and run.status in run_service.ACTIVE:
            raise Conflict(f"Run {run.id} is still {run.status}: compare it once it has finished.")
    scorer = session.get(Scorer, case.scorer_id)
    assert scorer is not None  # the foreign key is RESTRICT: a case always has its scorer
    config = config_of(scorer)
    base_rows = _rows_by_query(session, base_run)
    other_rows = base_rows if other_run is None else _rows_by_query(session, other_run)
    query_ids = sorted(set(base_rows) | set(other_rows))
    infos = _query_infos(session, query_ids)
    ratings = query_service.ratings_of(session=session, query_ids=query_ids)
    rescore = _Rescorer(config, infos, ratings, case.options or {})
    base = _side(session, case, base_run, base_rows, rescore if other_run is not None else None)
    other = _side(session, case, other_run or base_run, other_rows, rescore)
    k = scorer_k(scorer, rows=case_service.current_try(session=session, case=case).rows)
    queries = [_compare_query(qid, infos[qid], base, other, ratings[qid], k) for qid in query_ids]
    base_read, other_read = _side_read(base), _side_read(other)
    return RunComparison(
        case_id=case.id,
        scorer_id=scorer.id,
        scorer_name=scorer.name,
        k=k,
        sort=sort,
        base=base_read,
        other=other_read,
        case_score_delta=_delta(base_read.case_score, other_read.case_score),
        counts=_counts(queries),
        queries=_sorted(queries, sort),
    )


def _rows_by_query(session: Session, run: Run) -> dict[int, RunQuery]:
    # A row whose query was deleted since has no id to match on, and no ratings left.
    return {
        row.query_id: row
        for row in run_service.run_queries(session=session, run=run)
        if row.query_id is not None
    }


def _query_infos(session: Session, query_ids: Sequence[int]) -> dict[int, _QueryInfo]:
    if not query_ids:
        return {}
    stmt = select(Query.id, Query.text, Query.position, Query.options).where(
        Query.id.in_(query_ids)
    )
    return {
        qid: _QueryInfo(text=text, position=position, options=options or {})
        for qid, text, position, options in session.execute(stmt)
    }


@dataclass(frozen=True)
class _Rescorer:
    """Scores stored rankings with one scorer and the current ratings."""

    config: ScorerConfig
    infos: Mapping[int, _QueryInfo]
    ratings: Mapping[int, Mapping[str, float]]
    case_options: Mapping[str, Any]

    def __call__(self, rows: Mapping[int, RunQuery]) -> dict[int, Outcome]:
        """Return the outcome of every row; a fetch error stays that error."""
        answered = [qid for qid, row in rows.items() if _answered(row)]
        inputs = [
            run_service.stored_input(
                rows[qid], self.ratings[qid], self.infos[qid].options, self.case_options
            )
            for qid in answered
        ]
        outcomes = dict(zip(answered, score_queries(self.config, inputs), strict=True))
        return {qid: outcomes.get(qid) or _stored(row) for qid, row in rows.items()}


def _answered(row: RunQuery) -> bool:
    # The same test as the runs service's re-scoring: a fetch error leaves nothing to score.
    return not (row.status == "error" and row.num_found is None and not row.docs)


def _stored(row: RunQuery) -> Outcome:
    status = STORED_STATUSES.get(row.status, "error")
    return Outcome(status, row.score, row.raw_score, row.reason or row.error)


def _side(
    session: Session,
    case: Case,
    run: Run,
    rows: Mapping[int, RunQuery],
    rescore: _Rescorer | None,
) -> _Side:
    outcomes = rescore(rows) if rescore is not None else {q: _stored(r) for q, r in rows.items()}
    return _Side(
        run=run,
        rows=rows,
        outcomes=outcomes,
        title_field=_title_field(session, case, run),
        current_ratings=rescore is not None,
    )


def _title_field(session: Session, case: Case, run: Run) -> str | None:
    chosen = case_service.get_try(session=session, case=case, number=run.try_number)
    try:
        return parse_field_spec(chosen.field_spec).title_field
    except FieldSpecError:
        return None


def _side_read(side: _Side) -> CompareSide:
    statuses = [o.status for o in side.outcomes.values()]
    return CompareSide(
        run_id=side.run.id,
        try_number=side.run.try_number,
        current_ratings=side.current_ratings,
        case_score=case_score(side.outcomes.values()),
        scored=statuses.count("scored"),
        unscored=statuses.count("unscored"),
        errors=statuses.count("error"),
    )


def _compare_query(
    query_id: int,
    info: _QueryInfo,
    base: _Side,
    other: _Side,
    ratings: Mapping[str, float],
    k: int,
) -> QueryComparison:
    before, after = base.outcomes.get(query_id), other.outcomes.get(query_id)
    delta = _delta(_score(before), _score(after))
    base_top = _top(base.rows.get(query_id), k)
    other_top = _top(other.rows.get(query_id), k)
    return QueryComparison(
        query_id=query_id,
        text=info.text,
        position=info.position,
        base_status=before.status if before else None,
        base_score=before.score if before else None,
        other_status=after.status if after else None,
        other_score=after.score if after else None,
        delta=delta,
        change=_change(before, after, delta),
        entered=[
            _doc_change(doc, other.title_field, ratings)
            for doc_id, doc in other_top.items()
            if doc_id not in base_top
        ],
        left=[
            _doc_change(doc, base.title_field, ratings)
            for doc_id, doc in base_top.items()
            if doc_id not in other_top
        ],
    )


def _score(outcome: Outcome | None) -> float | None:
    return outcome.score if outcome is not None and outcome.status == "scored" else None


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _change(before: Outcome | None, after: Outcome | None, delta: float | None) -> Change:
    if after is None:
        return "only_base"
    if before is None:
        return "only_other"
    if delta is None:
        return "incomparable"
    if delta > SAME:
        return "improved"
    if delta < -SAME:
        return "worsened"
    return "unchanged"


def _top(row: RunQuery | None, k: int) -> dict[str, Mapping[str, Any]]:
    if row is None:
        return {}
    top = [{**doc, "rank": doc.get("rank") or i} for i, doc in enumerate(row.docs[:k], 1)]
    return {str(doc.get("id")): doc for doc in top}


def _doc_change(
    doc: Mapping[str, Any], title_field: str | None, ratings: Mapping[str, float]
) -> DocChange:
    fields: Mapping[str, Any] = doc.get("fields") or {}
    title = fields.get(title_field) if title_field else None
    doc_id = str(doc.get("id"))
    return DocChange(
        id=doc_id,
        title=_as_text(title),
        rank=int(doc["rank"]),
        rating=ratings.get(doc_id),
    )


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _counts(queries: Sequence[QueryComparison]) -> CompareCounts:
    changes = [q.change for q in queries]
    only_base, only_other = changes.count("only_base"), changes.count("only_other")
    return CompareCounts(
        improved=changes.count("improved"),
        worsened=changes.count("worsened"),
        unchanged=changes.count("unchanged"),
        incomparable=changes.count("incomparable"),
        only_base=only_base,
        only_other=only_other,
        only_in_one=only_base + only_other,
    )


def _sorted(queries: list[QueryComparison], sort: CompareSort) -> list[QueryComparison]:
    if sort == "text":
        return sorted(queries, key=lambda q: (q.text.casefold(), q.query_id))
    if sort == "position":
        return sorted(queries, key=lambda q: (q.position, q.query_id))
    # Biggest drop first; queries with no delta after every scored one, by position.
    return sorted(
        queries,
        key=lambda q: (q.delta is None, q.delta or 0.0, q.position, q.query_id),
    )

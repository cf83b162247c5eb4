"""Compare two runs, or a run with the current ratings, judged by the same current ratings.

Both stored rankings are re-scored in memory with the case's current scorer and ratings, so
a comparison is fair and never changes a stored run (nothing here writes to the database).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.compare.metrics import compare_case_metrics, comparison_seed, extra_metric_configs
from app.compare.rows import QueryInfo, StoredRow, docs_of, query_infos, stored_rows
from app.compare.schemas import (
    Change,
    CompareCounts,
    CompareSide,
    CompareSort,
    DocChange,
    QueryComparison,
    RunComparison,
)
from app.compare.stats import case_overlap, compare_stats, decide, query_overlap, sets_differ
from app.errors import Conflict
from app.metrics import aggregate_mean
from app.models import Case, Run
from app.queries.service import ratings_of
from app.runs import service as run_service
from app.runs.metrics import weighted
from app.runs.stored import doc_title, effective_knobs, engine_answered, field_spec_of
from app.scorers import service as scorer_service
from app.scorers.config import config_of
from app.scoring import Outcome, QueryInput, ScoreDoc, ScorerConfig, tally
from app.scoring.scoring import score_pass
from app.scoring.types import StoredDocs
from app.search import FieldSpec
from app.vocabulary import QueryStatus, ScorerKind

__all__ = ["COMPARE_SORT_LABELS", "compare_by_ids", "compare_runs"]

COMPARE_SORT_LABELS: dict[CompareSort, str] = {
    "delta": "Biggest drop first",
    "position": "Position",
    "text": "Text",
}

# Two scores this close are the same score: re-scoring one ranking twice is exact, but a
# metric may sum in a different order when a doc moves within the top.
SAME = 1e-9


@dataclass(frozen=True)
class _Side:
    """One side of a comparison: its stored rows and their outcomes, by query id."""

    run: Run
    rows: Mapping[int, StoredRow]
    outcomes: Mapping[int, Outcome]
    spec: FieldSpec
    current_ratings: bool
    # Each re-scored query's score under each extra metric of the case, by scorer id.
    metric_scores: Mapping[int, Mapping[int, float | None]]


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
    scorer = case.scorer
    config = config_of(scorer)
    extra = extra_metric_configs(session=session, case=case)
    # Built-in scorers read ids only; JavaScript may read the docs' fields.
    whole = any(c.kind == ScorerKind.JAVASCRIPT for c in [config, *(c for _, c in extra)])
    base_rows = stored_rows(session, base_run.id, docs=whole)
    other_rows = base_rows if other_run is None else stored_rows(session, other_run.id, docs=whole)
    query_ids = sorted(set(base_rows) | set(other_rows))
    infos = query_infos(session, query_ids)
    ratings = ratings_of(session=session, query_ids=query_ids)
    rescore = _Rescorer(config, extra, infos, ratings, case.options or {}, case.owner_id)
    base = _side(session, case, base_run, base_rows, rescore if other_run is not None else None)
    other = _side(session, case, other_run or base_run, other_rows, rescore)
    k = scorer_service.scorer_k(
        scorer, rows=case_service.current_try(session=session, case=case).rows
    )
    queries = _compare_queries(
        session,
        (base_run, other_run),
        (base_rows, other_rows),
        (base, other),
        infos=infos,
        ratings=ratings,
        k=k,
    )
    knobs = effective_knobs(
        session=session, case_id=case.id, runs=[r for r in (base_run, other_run) if r is not None]
    )
    # With weighted_mean, every mean is weighted by today's query weights (API.md).
    weights = {qid: info.weight for qid, info in infos.items()} if weighted(case) else None
    base_read, other_read = _side_read(base, knobs, weights), _side_read(other, knobs, weights)
    case_delta = _delta(base_read.case_score, other_read.case_score)
    # The same two runs draw the same sign flips: a page shows the same p every time.
    seed = comparison_seed(base_run.id, other_run.id if other_run is not None else None)
    metrics = compare_case_metrics(
        session=session,
        case=case,
        sides=(base_rows, other_rows),
        outcomes=(base.outcomes, other.outcomes),
        scores=(base.metric_scores, other.metric_scores),
        stored_base_run=base_run.id if other_run is None else None,
        seed=seed,
    )
    # The primary metric's randomization test is the first of the metrics' shared ones.
    primary = metrics[0] if metrics and metrics[0].scorer_id == scorer.id else None
    stats = compare_stats(
        queries, weights, seed=seed, shared_p=primary.p_randomization if primary else None
    )
    counts = _counts(queries)
    # One rule decides, with the primary metric's Holm-corrected p when there are several.
    decision = decide(stats, p_holm=metrics[0].p_holm if metrics else None, metrics=len(metrics))
    return RunComparison(
        case_id=case.id,
        scorer_id=scorer.id,
        scorer_name=scorer.name,
        aggregate="weighted_mean" if weighted(case) else "mean",
        k=k,
        sort=sort,
        base=base_read,
        other=other_read,
        case_score_delta=case_delta,
        case_change=None if case_delta is None else _direction(case_delta),
        # One headline: the paired mean, the same number as the sentence under it.
        headline_delta=stats.mean_delta,
        headline_change=None if stats.mean_delta is None else _direction(stats.mean_delta),
        sets_differ=sets_differ(base_read, other_read, counts, stats),
        counts=counts,
        stats=stats,
        overlap=case_overlap(queries),
        summary=decision.sentence,
        verdict=decision.verdict,
        decision_p=decision.p,
        queries=_sorted(queries, sort),
        metrics=metrics,
    )


def _compare_queries(
    session: Session,
    runs: tuple[Run, Run | None],
    rows: tuple[dict[int, StoredRow], dict[int, StoredRow]],
    sides: tuple[_Side, _Side],
    *,
    infos: Mapping[int, QueryInfo],
    ratings: Mapping[int, Mapping[str, float]],
    k: int,
) -> list[QueryComparison]:
    """Return each query's comparison, in query id order, with the docs that entered or
    left its top k."""
    (base_run, other_run), (base_rows, other_rows), (base, other) = runs, rows, sides
    query_ids = sorted(set(base_rows) | set(other_rows))
    tops = {
        qid: (_top_index(base_rows.get(qid), k), _top_index(other_rows.get(qid), k))
        for qid in query_ids
    }
    # Whole docs (for the titles of the docs that entered or left the top) only where it moved.
    moved = [qid for qid, (b, o) in tops.items() if b.keys() != o.keys()]
    base_docs = docs_of(session, base_run.id, base_rows, moved)
    other_docs = (
        base_docs if other_run is None else docs_of(session, other_run.id, other_rows, moved)
    )
    return [
        _compare_query(
            qid,
            infos[qid],
            (base, base_docs.get(qid), tops[qid][0]),
            (other, other_docs.get(qid), tops[qid][1]),
            ratings[qid],
        )
        for qid in query_ids
    ]


@dataclass(frozen=True)
class _Rescorer:
    """Scores stored rankings with the case's scorer and metrics and the current ratings."""

    config: ScorerConfig
    extra: Sequence[tuple[int, ScorerConfig]]
    infos: Mapping[int, QueryInfo]
    ratings: Mapping[int, Mapping[str, float]]
    case_options: Mapping[str, Any]
    owner: int | None

    def __call__(
        self, rows: Mapping[int, StoredRow]
    ) -> tuple[dict[int, Outcome], dict[int, dict[int, float | None]]]:
        """Return the primary outcome of every row (a fetch error stays that error) and each
        answered row's extra metric scores, all scored in one pass."""
        answered = [
            qid
            for qid, row in rows.items()
            if engine_answered(status=row.status, num_found=row.num_found, ranked=bool(row.ids))
            and qid in self.infos
        ]
        inputs = [
            QueryInput(
                # By id: built-in scorers read only ids, JavaScript gets fields on demand.
                docs=_score_docs(rows[qid]),
                ratings=self.ratings.get(qid, {}),
                num_found=rows[qid].num_found,
                query_options=self.infos[qid].options,
                case_options=self.case_options,
                text=self.infos[qid].text,
            )
            for qid in answered
        ]
        [primary], values = score_pass(
            [self.config], [c for _, c in self.extra], inputs, owner=self.owner
        )
        outcomes = dict(zip(answered, primary, strict=True))
        scores: dict[int, dict[int, float | None]] = {qid: {} for qid in answered}
        for (scorer_id, _config), column in zip(self.extra, values, strict=True):
            for qid, value in zip(answered, column, strict=True):
                scores[qid][scorer_id] = value
        return {qid: outcomes.get(qid) or _stored(row) for qid, row in rows.items()}, scores


def _score_docs(row: StoredRow) -> Sequence[ScoreDoc]:
    if row.docs is not None:
        return StoredDocs(row.docs).as_sequence()
    return StoredDocs.of_ids(row.ids).as_sequence()


def _stored(row: StoredRow) -> Outcome:
    return Outcome(row.status, row.score, row.raw_score, row.reason or row.error)


def _side(
    session: Session,
    case: Case,
    run: Run,
    rows: Mapping[int, StoredRow],
    rescore: _Rescorer | None,
) -> _Side:
    if rescore is not None:
        outcomes, scores = rescore(rows)
    else:
        outcomes, scores = {q: _stored(r) for q, r in rows.items()}, {}
    return _Side(
        run=run,
        rows=rows,
        outcomes=outcomes,
        spec=field_spec_of(session=session, case=case, run=run),
        current_ratings=rescore is not None,
        metric_scores=scores,
    )


def _side_read(
    side: _Side, knobs: Mapping[int, dict[str, Any]], weights: Mapping[int, float] | None
) -> CompareSide:
    totals = tally(side.outcomes.values())
    if weights is not None:
        scored = (
            (o.score, weights.get(qid, 1.0))
            for qid, o in side.outcomes.items()
            if o.status == QueryStatus.SCORED and o.score is not None
        )
        totals = replace(totals, case_score=aggregate_mean(scored, weighted=True))
    return CompareSide(
        run_id=side.run.id,
        try_number=side.run.try_number,
        current_ratings=side.current_ratings,
        case_score=totals.case_score,
        scored=totals.scored,
        unscored=totals.unscored,
        errors=totals.errors,
        knobs=knobs.get(side.run.id) or None,
    )


# One side of a query's comparison: the side, the query's stored docs if they were read
# (only where the top k changed), and its top-k ids with their indexes.
_QuerySide = tuple[_Side, list[Any] | None, dict[str, int]]


def _compare_query(
    query_id: int,
    info: QueryInfo,
    base_side: _QuerySide,
    other_side: _QuerySide,
    ratings: Mapping[str, float],
) -> QueryComparison:
    (base, base_docs, base_top), (other, other_docs, other_top) = base_side, other_side
    before, after = base.outcomes.get(query_id), other.outcomes.get(query_id)
    delta = _delta(_score(before), _score(after))
    # Built without validation: every value comes from this module, typed; a comparison of
    # two large runs makes tens of thousands of these.
    return QueryComparison.model_construct(
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
            _doc_change(other_docs[i], i + 1, other.spec, ratings)
            for doc_id, i in other_top.items()
            if other_docs is not None and doc_id not in base_top
        ],
        left=[
            _doc_change(base_docs[i], i + 1, base.spec, ratings)
            for doc_id, i in base_top.items()
            if base_docs is not None and doc_id not in other_top
        ],
        overlap=query_overlap(base_top, other_top) if before and after else None,
    )


def _top_index(row: StoredRow | None, k: int) -> dict[str, int]:
    # The first k doc ids, best first, each with its index in the stored list (no copies:
    # only the docs that entered or left the top are read further).
    if row is None:
        return {}
    return {doc_id: i for i, doc_id in enumerate(row.ids[:k])}


def _score(outcome: Outcome | None) -> float | None:
    return outcome.score if outcome is not None and outcome.status == QueryStatus.SCORED else None


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _change(before: Outcome | None, after: Outcome | None, delta: float | None) -> Change:
    if after is None:
        return "only_base"
    if before is None:
        return "only_other"
    if delta is None:
        return "incomparable"
    return _direction(delta)


def _direction(delta: float) -> Change:
    if delta > SAME:
        return "improved"
    if delta < -SAME:
        return "worsened"
    return "unchanged"


def _doc_change(
    doc: Mapping[str, Any], position: int, spec: FieldSpec, ratings: Mapping[str, float]
) -> DocChange:
    doc_id = str(doc.get("id"))
    return DocChange(
        id=doc_id,
        title=doc_title(doc, spec),
        rank=int(doc.get("rank") or position),
        rating=ratings.get(doc_id),
    )


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

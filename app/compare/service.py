"""Compare two runs, or a run with the current ratings, judged by the same current ratings.

Both stored rankings are re-scored in memory with the case's current scorer and ratings, so
a comparison is fair and never changes a stored run (nothing here writes to the database).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.compare.metric_schemas import MetricCompareRead
from app.compare.metrics import compare_case_metrics, comparison_seed, extra_metric_configs
from app.compare.rows import QueryInfo, StoredRow, docs_of, query_infos, stored_rows
from app.compare.schemas import (
    Change,
    CompareCounts,
    CompareSide,
    CompareSort,
    CompareStats,
    DocChange,
    QueryComparison,
    RunComparison,
)
from app.compare.sides import Rescorer, Side, side_of, side_read
from app.compare.stats import (
    Decision,
    case_overlap,
    compare_stats,
    decide,
    query_overlap,
    sets_differ,
)
from app.errors import Conflict
from app.models import Case, Run
from app.queries.service import ratings_of
from app.runs import service as run_service
from app.runs.metrics import weighted
from app.runs.stored_results import doc_title, effective_knobs
from app.scorers import service as scorer_service
from app.scorers.config import config_of
from app.scoring import Outcome
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
    _require_finished(base_run, other_run)
    loaded = _load(session, case, base_run, other_run)
    sides = _sides(session, case, loaded)
    queries = _compare_queries(session, loaded, sides)
    # With weighted_mean, every mean is weighted by today's query weights (API.md).
    weights = {qid: i.weight for qid, i in loaded.infos.items()} if weighted(case) else None
    reads = _side_reads(session, case, loaded, sides, weights)
    judged = _judge(session, case, loaded, sides, queries=queries, weights=weights)
    return _comparison(case, loaded.k, sort, reads=reads, queries=queries, judged=judged)


def _require_finished(base_run: Run, other_run: Run | None) -> None:
    for run in (base_run, other_run):
        if run is not None and run.status in run_service.ACTIVE:
            raise Conflict(f"Run {run.id} is still {run.status}: compare it once it has finished.")


@dataclass(frozen=True)
class _Loaded:
    """What a comparison reads once: both runs' stored rows, their queries (text, options,
    weights) and current ratings, the rescorer of the case's scorer and metrics, and the
    depth k of the top whose entering and leaving docs are listed."""

    base_run: Run
    other_run: Run | None
    base_rows: dict[int, StoredRow]
    other_rows: dict[int, StoredRow]
    infos: Mapping[int, QueryInfo]
    ratings: Mapping[int, Mapping[str, float]]
    rescore: Rescorer
    k: int

    @property
    def runs(self) -> list[Run]:
        """Return the runs compared (one when a run is compared with itself re-scored)."""
        return [r for r in (self.base_run, self.other_run) if r is not None]

    @property
    def seed(self) -> list[int]:
        """Return the seed of the sign flips: the same two runs show the same p every time."""
        return comparison_seed(
            self.base_run.id, None if self.other_run is None else self.other_run.id
        )


def _load(session: Session, case: Case, base_run: Run, other_run: Run | None) -> _Loaded:
    config = config_of(case.scorer)
    extra = extra_metric_configs(session=session, case=case)
    # Built-in scorers read ids only; JavaScript may read the docs' fields.
    whole = any(c.kind == ScorerKind.JAVASCRIPT for c in [config, *(c for _, c in extra)])
    base_rows = stored_rows(session, base_run.id, docs=whole)
    other_rows = base_rows if other_run is None else stored_rows(session, other_run.id, docs=whole)
    query_ids = sorted(set(base_rows) | set(other_rows))
    infos = query_infos(session, query_ids)
    ratings = ratings_of(session=session, query_ids=query_ids)
    rescore = Rescorer(config, extra, infos, ratings, case.options or {}, case.owner_id)
    rows = case_service.current_try(session=session, case=case).rows
    k = scorer_service.scorer_k(case.scorer, rows=rows)
    return _Loaded(base_run, other_run, base_rows, other_rows, infos, ratings, rescore, k)


def _sides(session: Session, case: Case, loaded: _Loaded) -> tuple[Side, Side]:
    # Alone, the base run keeps its stored scores and "other" is that run re-scored.
    base_rescore = None if loaded.other_run is None else loaded.rescore
    base = side_of(session, case, loaded.base_run, loaded.base_rows, base_rescore)
    other_run = loaded.other_run or loaded.base_run
    other = side_of(session, case, other_run, loaded.other_rows, loaded.rescore)
    return base, other


def _side_reads(
    session: Session,
    case: Case,
    loaded: _Loaded,
    sides: tuple[Side, Side],
    weights: Mapping[int, float] | None,
) -> tuple[CompareSide, CompareSide]:
    knobs = effective_knobs(session=session, case_id=case.id, runs=loaded.runs)
    return side_read(sides[0], knobs, weights), side_read(sides[1], knobs, weights)


_Reads = tuple[CompareSide, CompareSide]
_Queries = list[QueryComparison]


@dataclass(frozen=True)
class _Judged:
    """Every metric of the case compared, the primary's paired statistics, and the decision."""

    metrics: list[MetricCompareRead]
    stats: CompareStats
    decision: Decision


def _judge(
    session: Session,
    case: Case,
    loaded: _Loaded,
    sides: tuple[Side, Side],
    *,
    queries: Sequence[QueryComparison],
    weights: Mapping[int, float] | None,
) -> _Judged:
    metrics = _metrics(session, case, loaded, sides)
    # The primary metric's randomization test is the first of the metrics' shared ones.
    primary = metrics[0] if metrics and metrics[0].scorer_id == case.scorer.id else None
    shared_p = primary.p_randomization if primary else None
    stats = compare_stats(queries, weights, seed=loaded.seed, shared_p=shared_p)
    # One rule decides, with the primary metric's Holm-corrected p when there are several.
    decision = decide(stats, p_holm=metrics[0].p_holm if metrics else None, metrics=len(metrics))
    return _Judged(metrics, stats, decision)


def _metrics(
    session: Session, case: Case, loaded: _Loaded, sides: tuple[Side, Side]
) -> list[MetricCompareRead]:
    base, other = sides
    return compare_case_metrics(
        session=session,
        case=case,
        sides=(loaded.base_rows, loaded.other_rows),
        outcomes=(base.outcomes, other.outcomes),
        scores=(base.metric_scores, other.metric_scores),
        stored_base_run=loaded.base_run.id if loaded.other_run is None else None,
        seed=loaded.seed,
    )


def _comparison(
    case: Case, k: int, sort: CompareSort, *, reads: _Reads, queries: _Queries, judged: _Judged
) -> RunComparison:
    (base_read, other_read), stats, decision = reads, judged.stats, judged.decision
    case_delta, counts = _delta(base_read.case_score, other_read.case_score), _counts(queries)
    return RunComparison(
        case_id=case.id,
        scorer_id=case.scorer.id,
        scorer_name=case.scorer.name,
        aggregate="weighted_mean" if weighted(case) else "mean",
        k=k,
        sort=sort,
        base=base_read,
        other=other_read,
        case_score_delta=case_delta,
        case_change=_direction_of(case_delta),
        # One headline: the paired mean, the same number as the sentence under it.
        headline_delta=stats.mean_delta,
        headline_change=_direction_of(stats.mean_delta),
        sets_differ=sets_differ(base_read, other_read, counts, stats),
        counts=counts,
        stats=stats,
        overlap=case_overlap(queries),
        summary=decision.sentence,
        verdict=decision.verdict,
        decision_p=decision.p,
        queries=_sorted(queries, sort),
        metrics=judged.metrics,
    )


def _compare_queries(
    session: Session, loaded: _Loaded, sides: tuple[Side, Side]
) -> list[QueryComparison]:
    """Return each query's comparison, in query id order, with the docs that entered or
    left its top k."""
    base_rows, other_rows, k = loaded.base_rows, loaded.other_rows, loaded.k
    query_ids = sorted(set(base_rows) | set(other_rows))
    tops = {
        qid: (_top_index(base_rows.get(qid), k), _top_index(other_rows.get(qid), k))
        for qid in query_ids
    }
    # Whole docs (for the titles of the docs that entered or left the top) only where it moved.
    moved = [qid for qid, (b, o) in tops.items() if b.keys() != o.keys()]
    base_docs = docs_of(session, loaded.base_run.id, base_rows, moved)
    other_docs = (
        base_docs
        if loaded.other_run is None
        else docs_of(session, loaded.other_run.id, other_rows, moved)
    )
    (base, other), infos, ratings = sides, loaded.infos, loaded.ratings
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


# One side of a query's comparison: the side, the query's stored docs if they were read
# (only where the top k changed), and its top-k ids with their indexes.
_QuerySide = tuple[Side, list[Any] | None, dict[str, int]]


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


def _direction_of(delta: float | None) -> Change | None:
    return None if delta is None else _direction(delta)


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

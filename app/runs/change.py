"""Runs: the change of a case's score since its previous run, on one basis (issue 35).

A change is always between two numbers of the same kind: the run and the case's previous
run (a case run, ``case_runs.case_run``: never a sweep's combination or an agent's draft),
both re-scored from their stored rankings with today's ratings, the case's metric set,
query weights and aggregate. The metric panel's tiles, the dashboard's "since the run
before" and the alert rules all read it, so they agree with each other and with compare's
case-level delta (which re-scores both runs the same way).

Nothing is written: a re-score here is read-only (``rescore.rescore_run`` is the one that
stores). A row the engine did not answer keeps its stored outcome, and so does a metric
whose scorer no longer exists (or a run written without one). ``rescore_rows`` is the
re-score itself, of rows already read (``rescore_cache`` keeps what it gives).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.case_runs import case_run
from app.metrics import MetricDef, QueryScores, summarize
from app.models import Case, Query, Run, RunQuery, Scorer
from app.runs.metrics import metric_ids, scores_of_row, weighted
from app.runs.plan import score_metrics
from app.runs.scoring_input import StoredInputs, stored_inputs
from app.runs.stored_results import has_ranking
from app.scorers.config import config_of
from app.scoring import ScorerConfig
from app.vocabulary import RunStatus

__all__ = [
    "BASIS",
    "Change",
    "RunScores",
    "change_since",
    "previous_case_run",
    "primary_id",
    "rescore_rows",
    "rescored",
]

BASIS = "rescored"
"""How every number of a Change is made: re-scored with today's ratings and settings."""

# The key of the primary metric when the run was written without a scorer (its stored
# per-query scores are then all there is); scorer ids start at 1.
_NO_SCORER = 0


@dataclass(frozen=True)
class RunScores:
    """One run re-scored: per metric (scorer id) its case score and per-query scores."""

    run_id: int
    case_scores: Mapping[int, float | None]
    query_scores: Mapping[int, Mapping[int, float]]
    """scorer id → query id → score, for the queries that scored (a deleted query: -row id)."""


@dataclass(frozen=True)
class Change:
    """The run and the one it is compared with, both re-scored the same way.

    ``other`` is None when there is nothing to compare with (the case's first run).
    """

    run: RunScores
    other: RunScores | None
    primary_id: int
    aggregate: str
    basis: str = BASIS

    @property
    def other_id(self) -> int | None:
        """The id of the run compared with (the previous case run or the given one)."""
        return None if self.other is None else self.other.run_id

    def score(self, scorer_id: int | None = None) -> float | None:
        """The run's case score by this metric (None: the primary), re-scored."""
        return self.run.case_scores.get(self._key(scorer_id))

    def other_score(self, scorer_id: int | None = None) -> float | None:
        """The other run's case score by this metric, re-scored the same way."""
        return None if self.other is None else self.other.case_scores.get(self._key(scorer_id))

    def delta(self, scorer_id: int | None = None) -> float | None:
        """The run's score minus the other's by this metric; None unless both scored."""
        mine, theirs = self.score(scorer_id), self.other_score(scorer_id)
        return None if mine is None or theirs is None else mine - theirs

    def pairs(self, scorer_id: int | None = None) -> tuple[list[int], list[float], list[float]]:
        """Return the queries scored in both runs with the other's and the run's scores."""
        if self.other is None:
            return [], [], []
        key = self._key(scorer_id)
        mine = self.run.query_scores.get(key, {})
        theirs = self.other.query_scores.get(key, {})
        ids = sorted(set(mine) & set(theirs))
        return ids, [theirs[i] for i in ids], [mine[i] for i in ids]

    def _key(self, scorer_id: int | None) -> int:
        return self.primary_id if scorer_id is None else scorer_id


def primary_id(scorer_id: int | None) -> int:
    """Return the key of a run's primary metric: its scorer's id (``_NO_SCORER`` without)."""
    return scorer_id if scorer_id is not None else _NO_SCORER


def previous_case_run(*, session: Session, run: Run) -> Run | None:
    """Return the case's finished case run before this one (``case_runs.case_run``), if any."""
    return session.scalar(
        select(Run)
        .where(
            Run.case_id == run.case_id,
            Run.id < run.id,
            case_run(),
            Run.status == RunStatus.FINISHED,
        )
        .order_by(Run.id.desc())
        .limit(1)
    )


def change_since(
    *,
    session: Session,
    case: Case,
    run: Run,
    other: Run | None = None,
    scorer_ids: Sequence[int] | None = None,
) -> Change:
    """Return the run's change since the case's previous case run (or since ``other``).

    Both runs are re-scored with the run's metrics (``scorer_ids`` when given, the primary
    always), today's ratings, the queries' current weights and the case's aggregate: the
    previous run's stored scores may predate a rating, weight or aggregate change.
    """
    primary = primary_id(run.scorer_id)
    metrics = [*metric_ids(run), *(case.metric_scorer_ids or [])]
    wanted = list(
        dict.fromkeys([primary, *(int(i) for i in (metrics if scorer_ids is None else scorer_ids))])
    )
    if other is None:
        other = previous_case_run(session=session, run=run)
    mine = rescored(session=session, case=case, run=run, scorer_ids=wanted, primary=primary)
    theirs = (
        None
        if other is None
        else rescored(session=session, case=case, run=other, scorer_ids=wanted, primary=primary)
    )
    return Change(
        run=mine,
        other=theirs,
        primary_id=primary,
        aggregate="weighted_mean" if weighted(case) else "mean",
    )


def _rescorable(row: RunQuery) -> bool:
    """A row with a ranking to score again: the engine answered, and the row keeps what it
    answered (its docs, or at least its hit count: an empty answer scores too)."""
    return has_ranking(row) and (bool(row.docs) or row.num_found is not None)


def rescored(
    *, session: Session, case: Case, run: Run, scorer_ids: Sequence[int], primary: int
) -> RunScores:
    """Return the run's case and per-query scores by each metric with today's ratings,
    weights and aggregate; ``primary`` is the metric a row's own ``score`` stored."""
    rows = session.execute(
        select(RunQuery, Query)
        .outerjoin(Query, Query.id == RunQuery.query_id)
        .where(RunQuery.run_id == run.id)
        .order_by(RunQuery.id)
    ).all()
    found = {
        s.id: config_of(s) for s in session.scalars(select(Scorer).where(Scorer.id.in_(scorer_ids)))
    }
    answered = [query for row, query in rows if query is not None and _rescorable(row)]
    loaded = stored_inputs(
        session=session,
        case=case,
        query_ids=[q.id for q in answered],
        query_options={q.id: q.options for q in answered},
    )
    return rescore_rows(
        run_id=run.id,
        rows=[(row, query) for row, query in rows],
        configs=[(i, found[i]) for i in scorer_ids if i in found],
        loaded=loaded,
        scorer_ids=scorer_ids,
        primary=primary,
        weighted_mean=weighted(case),
    )


def rescore_rows(
    *,
    run_id: int,
    rows: Sequence[tuple[RunQuery, Query | None]],
    configs: Sequence[tuple[int, ScorerConfig]],
    loaded: StoredInputs,
    scorer_ids: Sequence[int],
    primary: int,
    weighted_mean: bool,
) -> RunScores:
    """Return a run's scores from its rows (by id, each with its query) re-scored with these
    metrics' configs (a metric without one keeps its stored scores), the ratings and options
    in ``loaded``, the queries' weights and the aggregate: ``rescored`` without the reads."""
    answered = [(row, query) for row, query in rows if query is not None and _rescorable(row)]
    inputs = [loaded.input_of(row) for row, _ in answered]
    fresh = dict(
        zip(
            (row.id for row, _ in answered),
            score_metrics(configs, inputs) if configs else [{} for _ in inputs],
            strict=True,
        )
    )
    queries: dict[int, QueryScores] = {}
    for row, query in rows:
        stored = scores_of_row(primary, row.status, row.score, row.metric_scores)
        scores = {i: stored.get(i) for i in scorer_ids}
        for key, value in fresh.get(row.id, {}).items():
            scores[int(key)] = value
        queries[row.query_id if row.query_id is not None else -row.id] = QueryScores(
            scores=scores,
            tags=tuple(query.tags or ()) if query is not None else (),
            weight=float(query.weight if query is not None and query.weight is not None else 1.0),
        )
    summaries = summarize(
        [MetricDef(scorer_id=i, name=str(i)) for i in scorer_ids],
        queries.values(),
        weighted=weighted_mean,
    )
    return RunScores(
        run_id=run_id,
        case_scores={m.scorer_id: m.case_score for m in summaries},
        query_scores={
            i: {qid: float(v) for qid, q in queries.items() if (v := q.scores.get(i)) is not None}
            for i in scorer_ids
        },
    )

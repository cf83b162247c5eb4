"""Every metric of the case over two runs, re-scored in one pass with the current ratings.

The comparison scores each side's stored rankings once, with the primary scorer and every
extra metric together (app.compare.sides); this compares them metric by metric, every
metric's randomization test drawing the same sign flips.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.compare.metric_schemas import MetricCompareRead, TagDeltaRead
from app.metrics import QueryScores, compare_metrics
from app.models import Case, Query, RunQuery, Scorer
from app.runs.metrics import metric_defs, weighted
from app.scorers.config import config_of
from app.scoring import Outcome, ScorerConfig
from app.scoring.significance import SEED
from app.vocabulary import QueryStatus

__all__ = ["compare_case_metrics", "comparison_seed", "extra_metric_configs"]


class _Row(Protocol):
    """The columns of a stored row that scoring reads (app.compare.rows.StoredRow)."""

    @property
    def status(self) -> QueryStatus: ...
    @property
    def num_found(self) -> int | None: ...
    @property
    def ids(self) -> list[str]: ...
    @property
    def docs(self) -> list[Any] | None: ...


# Each query's extra metric scores by scorer id.
_Scores = Mapping[int, Mapping[int, float | None]]


def extra_metric_configs(*, session: Session, case: Case) -> list[tuple[int, ScorerConfig]]:
    """Return the case's extra metrics (scorer id, config), in order; deleted ones left out."""
    extra = [i for i in case.metric_scorer_ids or [] if i != case.scorer_id]
    if not extra:
        return []
    found = {s.id: s for s in session.scalars(select(Scorer).where(Scorer.id.in_(extra)))}
    return [(i, config_of(found[i])) for i in extra if i in found]


def comparison_seed(base_run_id: int, other_run_id: int | None) -> list[int]:
    """Return the seed of a comparison's sign flips: the same two runs, the same flips."""
    return [SEED, base_run_id, 0 if other_run_id is None else other_run_id]


def compare_case_metrics(
    *,
    session: Session,
    case: Case,
    sides: tuple[Mapping[int, _Row], Mapping[int, _Row]],
    outcomes: tuple[Mapping[int, Outcome], Mapping[int, Outcome]],
    scores: tuple[_Scores, _Scores],
    stored_base_run: int | None = None,
    seed: int | Sequence[int] = SEED,
) -> list[MetricCompareRead]:
    """Return every metric of the case (the primary first) compared from base to other.

    ``outcomes`` are each side's primary outcomes and ``scores`` each re-scored query's
    extra metric scores (scored with the primary in one pass). ``stored_base_run``: the base
    keeps the scores that run stored (a run compared with itself re-scored), instead of
    being re-scored. ``seed``: the seed of the metrics' shared sign flips.
    """
    extra = [i for i in case.metric_scorer_ids or [] if i != case.scorer_id]
    defs = metric_defs(session=session, ids=[case.scorer_id, *extra])
    tags = _tags_and_weights(session, sorted(set(sides[0]) | set(sides[1])))
    scored = []
    for index, (rows, primary, extras) in enumerate(zip(sides, outcomes, scores, strict=True)):
        if index == 0 and stored_base_run is not None:
            by_query = _stored_scores(session, stored_base_run, case.scorer_id, primary)
        else:
            by_query = {
                qid: {**extras.get(qid, {}), case.scorer_id: _primary(primary.get(qid))}
                for qid in rows
            }
        scored.append(
            {
                qid: QueryScores(
                    scores=s, tags=tags.get(qid, ((), 1.0))[0], weight=tags.get(qid, ((), 1.0))[1]
                )
                for qid, s in by_query.items()
            }
        )
    found = compare_metrics(defs, scored[0], scored[1], weighted=weighted(case), seed=seed)
    return [
        MetricCompareRead(
            scorer_id=m.scorer_id,
            name=m.name,
            n=m.n,
            base=m.base,
            other=m.other,
            delta=m.delta,
            p_t=m.p_t,
            p_randomization=m.p_randomization,
            p_holm=m.p_holm,
            by_tag=[TagDeltaRead(tag=t.tag, count=t.count, delta=t.delta) for t in m.by_tag],
        )
        for m in found
    ]


def _primary(outcome: Outcome | None) -> float | None:
    if outcome is None or outcome.status != QueryStatus.SCORED:
        return None
    return outcome.score


def _stored_scores(
    session: Session, run_id: int, primary_id: int, primary: Mapping[int, Outcome]
) -> dict[int, dict[int, float | None]]:
    stmt = select(RunQuery.query_id, RunQuery.metric_scores).where(
        RunQuery.run_id == run_id, RunQuery.query_id.is_not(None)
    )
    result: dict[int, dict[int, float | None]] = {}
    for qid, stored in session.execute(stmt):
        scores: dict[int, float | None] = {int(k): v for k, v in (stored or {}).items()}
        scores[primary_id] = _primary(primary.get(qid))
        result[qid] = scores
    return result


def _tags_and_weights(
    session: Session, query_ids: Sequence[int]
) -> dict[int, tuple[tuple[str, ...], float]]:
    if not query_ids:
        return {}
    stmt = select(Query.id, Query.tags, Query.weight).where(Query.id.in_(query_ids))
    return {
        qid: (tuple(tags or ()), float(weight if weight is not None else 1.0))
        for qid, tags, weight in session.execute(stmt)
    }

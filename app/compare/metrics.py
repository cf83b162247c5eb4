"""Every metric of the case over two runs, re-scored in one pass with the current ratings.

The primary scorer's outcomes come from the comparison itself; each extra metric scores
the same stored rankings (the inputs are built once per side and shared by the metrics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.compare.metric_schemas import MetricCompareRead, TagDeltaRead
from app.metrics import QueryScores, compare_metrics
from app.models import Case, Query, RunQuery, Scorer
from app.models.scorers import config_of
from app.runs.metrics import metric_defs, weighted
from app.runs.plan import score_metrics
from app.runs.stored import engine_answered
from app.scoring import Outcome, QueryInput
from app.scoring.types import StoredDocs
from app.vocabulary import QueryStatus, ScorerKind

__all__ = ["compare_case_metrics", "metrics_read_fields"]


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


class _Info(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def options(self) -> Mapping[str, Any]: ...


def compare_case_metrics(
    *,
    session: Session,
    case: Case,
    sides: tuple[Mapping[int, _Row], Mapping[int, _Row]],
    outcomes: tuple[Mapping[int, Outcome], Mapping[int, Outcome]],
    infos: Mapping[int, _Info],
    ratings: Mapping[int, Mapping[str, float]],
    stored_base_run: int | None = None,
) -> list[MetricCompareRead]:
    """Return every metric of the case (the primary first) compared from base to other.

    ``stored_base_run``: the base keeps the scores that run stored (a run compared with
    itself re-scored), instead of being re-scored.
    """
    extra = [i for i in case.metric_scorer_ids or [] if i != case.scorer_id]
    defs = metric_defs(session=session, ids=[case.scorer_id, *extra])
    configs = {
        s.id: config_of(s) for s in session.scalars(select(Scorer).where(Scorer.id.in_(extra)))
    }
    metrics = [(i, configs[i]) for i in extra if i in configs]
    tags = _tags_and_weights(session, sorted(set(sides[0]) | set(sides[1])))
    scored = []
    for index, (rows, primary) in enumerate(zip(sides, outcomes, strict=True)):
        if index == 0 and stored_base_run is not None:
            scores = _stored_scores(session, stored_base_run, case.scorer_id, primary)
        else:
            scores = _rescored(rows, primary, metrics, infos, ratings, case, case.scorer_id)
        scored.append(
            {
                qid: QueryScores(
                    scores=s, tags=tags.get(qid, ((), 1.0))[0], weight=tags.get(qid, ((), 1.0))[1]
                )
                for qid, s in scores.items()
            }
        )
    found = compare_metrics(defs, scored[0], scored[1], weighted=weighted(case))
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


def metrics_read_fields(*, session: Session, case: Case) -> bool:
    """Return whether an extra metric of the case is JavaScript (which may read doc fields)."""
    extra = [i for i in case.metric_scorer_ids or [] if i != case.scorer_id]
    if not extra:
        return False
    kinds = session.scalars(select(Scorer.kind).where(Scorer.id.in_(extra)))
    return any(kind == ScorerKind.JAVASCRIPT for kind in kinds)


def _primary(outcome: Outcome | None) -> float | None:
    if outcome is None or outcome.status != QueryStatus.SCORED:
        return None
    return outcome.score


def _rescored(
    rows: Mapping[int, _Row],
    primary: Mapping[int, Outcome],
    metrics: Sequence[tuple[int, Any]],
    infos: Mapping[int, _Info],
    ratings: Mapping[int, Mapping[str, float]],
    case: Case,
    primary_id: int,
) -> dict[int, dict[int, float | None]]:
    answered = [
        qid
        for qid, row in rows.items()
        if engine_answered(status=row.status, num_found=row.num_found, ranked=bool(row.ids))
        and qid in infos
    ]
    inputs = [
        QueryInput(
            docs=_docs(rows[qid]),
            ratings=ratings.get(qid, {}),
            num_found=rows[qid].num_found,
            query_options=infos[qid].options,
            case_options=case.options or {},
            text=infos[qid].text,
        )
        for qid in answered
    ]
    extra = dict(zip(answered, score_metrics(metrics, inputs, owner=case.owner_id), strict=True))
    result: dict[int, dict[int, float | None]] = {}
    for qid in rows:
        scores: dict[int, float | None] = {int(k): v for k, v in extra.get(qid, {}).items()}
        scores[primary_id] = _primary(primary.get(qid))
        result[qid] = scores
    return result


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


def _docs(row: _Row) -> Any:
    if row.docs is not None:
        return StoredDocs(row.docs).as_sequence()
    return StoredDocs.of_ids(row.ids).as_sequence()

"""One side of a comparison: a run's stored rows re-scored in memory with the case's scorer,
its extra metrics and the current ratings (or kept as stored), and the side's totals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from app.compare.rows import QueryInfo, StoredRow
from app.compare.schemas import CompareSide
from app.metrics import aggregate_mean
from app.models import Case, Run
from app.runs.stored_results import engine_answered, field_spec_of
from app.scoring import Outcome, QueryInput, ScoreDoc, ScorerConfig, tally
from app.scoring.score import score_pass
from app.scoring.types import StoredDocs
from app.search import FieldSpec
from app.vocabulary import QueryStatus

__all__ = ["Rescorer", "Side", "side_of", "side_read"]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its stored rows and their outcomes, by query id."""

    run: Run
    rows: Mapping[int, StoredRow]
    outcomes: Mapping[int, Outcome]
    spec: FieldSpec
    current_ratings: bool
    # Each re-scored query's score under each extra metric of the case, by scorer id.
    metric_scores: Mapping[int, Mapping[int, float | None]]


@dataclass(frozen=True)
class Rescorer:
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
        answered = [qid for qid, row in rows.items() if _answered(row) and qid in self.infos]
        [primary], values = score_pass(
            [self.config],
            [c for _, c in self.extra],
            [self._input(qid, rows[qid]) for qid in answered],
            owner=self.owner,
        )
        outcomes = dict(zip(answered, primary, strict=True))
        scores = self._extra_scores(answered, values)
        return {qid: outcomes.get(qid) or _stored(row) for qid, row in rows.items()}, scores

    def _input(self, query_id: int, row: StoredRow) -> QueryInput:
        info = self.infos[query_id]
        return QueryInput(
            # By id: built-in scorers read only ids, JavaScript gets fields on demand.
            docs=_score_docs(row),
            ratings=self.ratings.get(query_id, {}),
            num_found=row.num_found,
            query_options=info.options,
            case_options=self.case_options,
            text=info.text,
        )

    def _extra_scores(
        self, answered: Sequence[int], values: Sequence[Sequence[float | None]]
    ) -> dict[int, dict[int, float | None]]:
        # score_pass gives one column per extra metric; a side reads them by query.
        scores: dict[int, dict[int, float | None]] = {qid: {} for qid in answered}
        for (scorer_id, _config), column in zip(self.extra, values, strict=True):
            for qid, value in zip(answered, column, strict=True):
                scores[qid][scorer_id] = value
        return scores


def _answered(row: StoredRow) -> bool:
    return engine_answered(status=row.status, num_found=row.num_found, ranked=bool(row.ids))


def _score_docs(row: StoredRow) -> Sequence[ScoreDoc]:
    if row.docs is not None:
        return StoredDocs(row.docs).as_sequence()
    return StoredDocs.of_ids(row.ids).as_sequence()


def _stored(row: StoredRow) -> Outcome:
    return Outcome(row.status, row.score, row.raw_score, row.reason or row.error)


def side_of(
    session: Session,
    case: Case,
    run: Run,
    rows: Mapping[int, StoredRow],
    rescore: Rescorer | None,
) -> Side:
    """Return a run's side: re-scored by ``rescore``, or with its stored outcomes without."""
    if rescore is not None:
        outcomes, scores = rescore(rows)
    else:
        outcomes, scores = {q: _stored(r) for q, r in rows.items()}, {}
    return Side(
        run=run,
        rows=rows,
        outcomes=outcomes,
        spec=field_spec_of(session=session, case=case, run=run),
        current_ratings=rescore is not None,
        metric_scores=scores,
    )


def side_read(
    side: Side, knobs: Mapping[int, dict[str, Any]], weights: Mapping[int, float] | None
) -> CompareSide:
    """Return a side's case score and counts (weighted by ``weights`` when given)."""
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

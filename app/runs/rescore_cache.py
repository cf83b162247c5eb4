"""Runs: re-scored case scores kept between reads, keyed by everything they are made of.

``change.rescored`` re-scores a stored run with today's ratings, weights, options, scorers
and aggregate; the dashboard wants it for up to three runs of every case on every load.
A run's re-scored case scores are a function of:

- the run's rows: their ids and queries, their stored outcomes (status, score, metric
  scores) and hit counts, and their rankings and texts, which a row never rewrites (a chunk
  written again replaces its rows under new ids; a re-score rewrites the outcome and the
  ratings shown beside the docs, which re-scoring does not read);
- each row's query: its weight, its options and its ratings;
- the case's options and aggregate, each metric's scorer, the metrics and the primary.

``rescored_case_scores`` reads all of them but the rankings on every call (a few light
statements for any number of runs) and digests them with the run's id and creation time
(which stand for its rankings) into a key; a run is re-scored only when no earlier call saw
the same key. What is stored under a key is computed from the very data digested into it,
so a change made between two reads never leaves a number under a key it does not belong to.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Case, Query, Rating, Run, RunQuery, Scorer
from app.runs.change import rescore_rows
from app.runs.metrics import weighted
from app.runs.scoring_input import StoredInputs
from app.scorers.config import config_of

__all__ = ["Wanted", "clear", "rescored_case_scores"]

CaseScores = Mapping[int, float | None]
"""A run's re-scored case score by metric (scorer id)."""

# Each entry is a few floats under a 16-byte digest: thousands cost well under a megabyte.
_SIZE = 4096
_LOCK = threading.Lock()
_KEPT: OrderedDict[bytes, CaseScores] = OrderedDict()


@dataclass(frozen=True)
class Wanted:
    """A run of a case to re-score by these metrics (``change.rescored``'s arguments)."""

    case: Case
    run_id: int
    scorer_ids: tuple[int, ...]
    primary: int


def rescored_case_scores(*, session: Session, wanted: Sequence[Wanted]) -> list[CaseScores]:
    """Return each wanted run's case score by metric, as ``change.rescored`` gives it,
    re-scoring only the runs whose inputs no earlier call saw (in this process)."""
    if not wanted:
        return []
    inputs = _Inputs.load(session, wanted)
    keys = [inputs.key(w, inputs.rows.get(w.run_id, [])) for w in wanted]
    found = [_get(key) for key in keys]
    missing = [w for w, scores in zip(wanted, found, strict=True) if scores is None]
    fresh = _rescore(session, inputs, missing)
    return [
        scores if scores is not None else fresh[(w.run_id, w.scorer_ids, w.primary)]
        for w, scores in zip(wanted, found, strict=True)
    ]


def clear() -> None:
    """Forget every kept score (the next call re-scores every run it is asked for)."""
    with _LOCK:
        _KEPT.clear()


def _get(key: bytes) -> CaseScores | None:
    with _LOCK:
        scores = _KEPT.get(key)
        if scores is not None:
            _KEPT.move_to_end(key)
        return scores


def _put(key: bytes, scores: CaseScores) -> None:
    with _LOCK:
        _KEPT[key] = scores
        _KEPT.move_to_end(key)
        while len(_KEPT) > _SIZE:
            _KEPT.popitem(last=False)


def _rescore(
    session: Session, inputs: _Inputs, missing: Sequence[Wanted]
) -> dict[tuple[int, tuple[int, ...], int], CaseScores]:
    """Re-score the missing runs from their whole rows, read now, and keep what they give
    under the key of the rows they were given with (not of the light rows read before)."""
    if not missing:
        return {}
    stmt = (
        select(RunQuery, Query)
        .outerjoin(Query, Query.id == RunQuery.query_id)
        .where(RunQuery.run_id.in_({w.run_id for w in missing}))
        .order_by(RunQuery.run_id, RunQuery.id)
    )
    rows: dict[int, list[tuple[RunQuery, Query | None]]] = defaultdict(list)
    for row, query in session.execute(stmt):
        rows[row.run_id].append((row, query))
    fresh: dict[tuple[int, tuple[int, ...], int], CaseScores] = {}
    for w in missing:
        whole = rows.get(w.run_id, [])
        scores = _case_scores(inputs, w, whole)
        _put(inputs.key(w, [_light(row, query) for row, query in whole]), scores)
        fresh[(w.run_id, w.scorer_ids, w.primary)] = scores
    return fresh


def _case_scores(
    inputs: _Inputs, w: Wanted, rows: Sequence[tuple[RunQuery, Query | None]]
) -> CaseScores:
    loaded = StoredInputs(
        ratings=inputs.ratings,
        query_options={q.id: q.options for _, q in rows if q is not None},
        case_options=w.case.options or {},
    )
    configs = [(i, config_of(inputs.scorers[i])) for i in w.scorer_ids if i in inputs.scorers]
    return MappingProxyType(
        rescore_rows(
            run_id=w.run_id,
            rows=rows,
            configs=configs,
            loaded=loaded,
            scorer_ids=w.scorer_ids,
            primary=w.primary,
            weighted_mean=weighted(w.case),
        ).case_scores
    )


_Light = tuple[Any, ...]
"""What a re-score reads of a row and its query, but the ranking and text."""


def _light(row: RunQuery, query: Query | None) -> _Light:
    return (
        row.id,
        row.query_id,
        str(row.status),
        row.score,
        row.num_found,
        row.metric_scores,
        None if query is None else (query.id, query.weight, query.options),
    )


@dataclass(frozen=True)
class _Inputs:
    """What the wanted runs' re-scores read besides their rankings, read at once."""

    created: Mapping[int, datetime]
    rows: Mapping[int, list[_Light]]
    ratings: Mapping[int, Mapping[str, float]]
    scorers: Mapping[int, Scorer]
    rated: dict[int, str] = field(default_factory=dict)

    @classmethod
    def load(cls, session: Session, wanted: Sequence[Wanted]) -> _Inputs:
        run_ids = {w.run_id for w in wanted}
        stmt_created = select(Run.id, Run.created_at).where(Run.id.in_(run_ids))
        created = {run_id: at for run_id, at in session.execute(stmt_created)}
        stmt = (
            select(
                RunQuery.run_id,
                RunQuery.id,
                RunQuery.query_id,
                RunQuery.status,
                RunQuery.score,
                RunQuery.num_found,
                RunQuery.metric_scores,
                Query.id,
                Query.weight,
                Query.options,
            )
            .outerjoin(Query, Query.id == RunQuery.query_id)
            .where(RunQuery.run_id.in_(run_ids))
            .order_by(RunQuery.run_id, RunQuery.id)
        )
        rows: dict[int, list[_Light]] = defaultdict(list)
        for run_id, row_id, of, status, *stored, query_id, weight, options in session.execute(stmt):
            query = None if query_id is None else (query_id, weight, options)
            rows[run_id].append((row_id, of, str(status), *stored, query))
        ids = {i for w in wanted for i in w.scorer_ids}
        scorers = {s.id: s for s in session.scalars(select(Scorer).where(Scorer.id.in_(ids)))}
        return cls(created, rows, _ratings(session, run_ids), scorers)

    def key(self, w: Wanted, rows: Iterable[_Light]) -> bytes:
        """The digest of everything the run's re-score by these metrics is made of."""
        head = (w.run_id, self.created.get(w.run_id), w.scorer_ids, w.primary)
        case = (w.case.aggregate, w.case.options)
        scorers = [self._scorer(i) for i in w.scorer_ids]
        rated = [(light, self._rated(light[1])) for light in rows]
        text = repr((head, case, scorers, rated))
        return hashlib.blake2b(text.encode(), digest_size=16).digest()

    def _rated(self, query_id: int | None) -> str:
        """The query's ratings as text, in doc id order (made once per query and call)."""
        if query_id is None:
            return ""
        text = self.rated.get(query_id)
        if text is None:
            text = self.rated[query_id] = repr(sorted(self.ratings.get(query_id, {}).items()))
        return text

    def _scorer(self, scorer_id: int) -> tuple[Any, ...] | None:
        s = self.scorers.get(scorer_id)
        if s is None:
            return None
        fields = (s.kind, s.params, s.scale, s.scale_labels, s.code, s.max_score, s.environment)
        return (*fields, s.updated_at)


def _ratings(session: Session, run_ids: Iterable[int]) -> dict[int, dict[str, float]]:
    """Return the ratings of every query the runs' rows are of: query id → doc id → rating."""
    queries = select(RunQuery.query_id).where(RunQuery.run_id.in_(run_ids))
    stmt = select(Rating.query_id, Rating.doc_id, Rating.rating).where(Rating.query_id.in_(queries))
    ratings: dict[int, dict[str, float]] = defaultdict(dict)
    for query_id, doc_id, rating in session.execute(stmt):
        ratings[query_id][doc_id] = rating
    return ratings

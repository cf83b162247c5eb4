"""Many queries' rankings and ratings as the numpy arrays the array pass scores.

Every query's ranking becomes a row of one 2-D array of grades (NaN where a doc is unrated
or past the end of the results), and every query's ratings one flat array, also sorted into
each query's ideal order. A query whose data cannot be read is recorded as a failure and
built as a query with no results and no ratings, so that it fails alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

import numpy as np

from app.scoring.types import QueryInput, StoredDocs

__all__ = ["Arrays", "Need", "build_arrays", "needs"]

NAN = math.nan
_doc_id = attrgetter("id")
_NUMBERS = frozenset({float, int, bool})
_EMPTY = QueryInput(docs=[], ratings={})


@dataclass(frozen=True)
class Need:
    """How much of each ranking and of each ideal order a set of metrics reads."""

    depth: int  # positions of each ranking (0: every position)
    ideal: int  # entries of each query's ideal order


def needs(kinds_params: Sequence[tuple[str, Mapping[str, Any]]]) -> Need:
    """Return the depth of rankings and ideal orders the metrics read."""
    depth, ideal, whole = 1, 0, False
    for kind, params in kinds_params:
        k = int(params["k"])
        depth = max(depth, k)
        if kind == "classic" or (kind == "ndcg" and params["ideal"] == "rated"):
            ideal = max(ideal, k)
        if kind == "ndcg" and (params["unrated"] == "skip" or params["ideal"] == "results"):
            whole = True  # the rated docs past the top k count too
    return Need(depth=0 if whole else depth, ideal=ideal)


@dataclass
class Arrays:
    """Many queries' rankings and ratings as arrays (see the module's docstring)."""

    size: int
    grades: np.ndarray  # size x depth, NaN where unrated or past the end
    lengths: np.ndarray  # the number of returned docs of each query
    has_ratings: np.ndarray  # bool: the query has at least one rating
    values: np.ndarray  # every rating of every query, query after query
    owners: np.ndarray  # the query (row) of each entry of ``values``
    ideal: np.ndarray  # size x ideal depth: each query's ratings, best first, NaN after
    failures: dict[int, Exception] = field(default_factory=dict)  # rows whose data broke
    _clamped: Arrays | None = None

    def clamped(self) -> Arrays:
        """Return these arrays with negative grades read as 0 (judged, no gain)."""
        if self._clamped is None:
            self._clamped = Arrays(
                size=self.size,
                grades=np.maximum(self.grades, 0.0),  # NaN stays NaN
                lengths=self.lengths,
                has_ratings=self.has_ratings,
                values=np.maximum(self.values, 0.0),
                owners=self.owners,
                ideal=np.maximum(self.ideal, 0.0),
                failures=self.failures,
            )
        return self._clamped


@dataclass
class _Read:
    """The queries as read in one loop: flat Python lists, query after query."""

    grades: list[float] = field(default_factory=list)  # the top grades of every query
    values: list[Any] = field(default_factory=list)  # each query's ratings' values
    lengths: list[int] = field(default_factory=list)  # each query's number of results
    failures: dict[int, Exception] = field(default_factory=dict)


def build_arrays(queries: Sequence[QueryInput], need: Need) -> Arrays:
    """Return the arrays of the queries; a query whose data cannot be read is a failure."""
    read = _read(queries, need.depth or None)  # None: every position
    if not _NUMBERS.issuperset(map(type, chain.from_iterable(read.values))):
        return _rebuild_numbers_only(queries, need, read)
    lengths = np.asarray(read.lengths, dtype=np.int64)
    values, counts, owners = _flat_ratings(read.values)
    _fail_not_finite(values, owners, read.failures)
    return Arrays(
        size=len(queries),
        grades=_grade_rows(read.grades, lengths, need.depth),
        lengths=lengths,
        has_ratings=counts > 0,
        values=values,
        owners=owners,
        ideal=_ideal(values, owners, counts, len(queries), need.ideal),
        failures=read.failures,
    )


def _read(queries: Sequence[QueryInput], depth: int | None) -> _Read:
    """Read each query's top grades, ratings and length; a query that raises is a failure."""
    read = _Read()
    grades = read.grades
    add_grades, add_values, add_length = grades.extend, read.values.append, read.lengths.append
    nans = repeat(NAN)
    for row, query in enumerate(queries):
        docs: Any = query.docs  # a StoredDocs, or a list of ScoreDocs
        ratings = query.ratings
        # The hot loop of every score: one dict look-up per doc, little else per query.
        start = len(grades)
        try:
            if type(docs) is StoredDocs:
                add_grades(map(ratings.get, docs.head_ids(depth), nans))
            else:
                add_grades(map(ratings.get, map(_doc_id, docs[:depth]), nans))
            add_values(ratings.values())
            add_length(len(docs))
        except Exception as exc:  # a query's bad data must not stop the batch
            _drop(read, row, start, exc)
    return read


def _drop(read: _Read, row: int, start: int, exc: Exception) -> None:
    """Record the row as failed and keep it as a row with no results and no ratings."""
    read.failures[row] = exc
    del read.grades[start:], read.values[row:], read.lengths[row:]
    read.values.append(())
    read.lengths.append(0)


def _rebuild_numbers_only(queries: Sequence[QueryInput], need: Need, read: _Read) -> Arrays:
    """Fail each query with a rating that is not a number, and build the rest again."""
    failures = read.failures
    for row, values in enumerate(read.values):
        if not all(isinstance(v, int | float) for v in values):
            failures[row] = TypeError("a rating is not a number")
    kept = [_EMPTY if row in failures else query for row, query in enumerate(queries)]
    arrays = build_arrays(kept, need)
    arrays.failures.update(failures)
    return arrays


def _grade_rows(grades: list[float], lengths: np.ndarray, depth: int) -> np.ndarray:
    """Return the grades as one row per query, NaN past the end of its results."""
    filled = np.minimum(lengths, depth) if depth else lengths
    # As wide as the longest ranking read: a k of 1000 over 10 results makes 10 columns.
    width = max(int(filled.max(initial=0)), 1)
    rows = np.full((lengths.size, width), NAN)
    rows[np.arange(width) < filled[:, None]] = np.fromiter(
        grades, dtype=np.float64, count=len(grades)
    )
    return rows


def _flat_ratings(parts: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return every rating in one array, each query's count, and each rating's query."""
    counts = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    values = np.fromiter(chain.from_iterable(parts), dtype=np.float64, count=int(counts.sum()))
    return values, counts, np.repeat(np.arange(len(parts)), counts)


def _fail_not_finite(
    values: np.ndarray, owners: np.ndarray, failures: dict[int, Exception]
) -> None:
    """Fail each query with a rating that is not finite (the reference's diagnosis says so)."""
    for row in np.unique(owners[~np.isfinite(values)]).tolist():
        failures[row] = ValueError("a rating is not a finite number")


def _ideal(
    values: np.ndarray, owners: np.ndarray, counts: np.ndarray, size: int, depth: int
) -> np.ndarray:
    """Return each query's first ``depth`` ratings, best first (NaN past its last)."""
    depth = min(depth, int(counts.max(initial=0)))  # no wider than the most ratings
    ideal = np.full((size, max(depth, 1)), NAN)
    if depth == 0 or values.size == 0:
        return ideal
    if size * int(counts.max()) <= 4 * values.size + 1024:
        return _ideal_rows(values, counts, ideal)
    return _ideal_sorted(values, owners, counts, ideal)


def _ideal_rows(values: np.ndarray, counts: np.ndarray, ideal: np.ndarray) -> np.ndarray:
    """Fill the ideal orders with one row of ratings per query, each row sorted (NaN last)."""
    widest = int(counts.max())
    dense = np.full((counts.size, widest), NAN)
    dense[np.arange(widest) < counts[:, None]] = -values
    best = -np.sort(dense, axis=1)[:, : ideal.shape[1]]
    ideal[:, : best.shape[1]] = best
    return ideal


def _ideal_sorted(
    values: np.ndarray, owners: np.ndarray, counts: np.ndarray, ideal: np.ndarray
) -> np.ndarray:
    """Fill the ideal orders by one sort of every rating (for a few queries rated widely)."""
    depth = ideal.shape[1]
    order = np.lexsort((-values, owners))  # by query, then rating descending
    starts = np.cumsum(counts) - counts
    rank = np.arange(values.size) - starts[owners[order]]
    keep = rank < depth
    ideal[owners[order][keep], rank[keep]] = values[order][keep]
    return ideal

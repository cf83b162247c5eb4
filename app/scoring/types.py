"""Plain data passed into and out of the scorers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from app.vocabulary import QueryStatus


@dataclass(frozen=True)
class ScorerConfig:
    """A validated scorer: what to compute and on which rating scale."""

    kind: str
    scale: tuple[float, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    code: str | None = None
    max_score: float = 100.0


@dataclass(frozen=True)
class ScoreDoc:
    """One returned document: its id and the fields a JavaScript scorer may read."""

    id: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryInput:
    """Everything one query's score depends on."""

    docs: Sequence[ScoreDoc]
    ratings: Mapping[str, float]
    num_found: int | None = None
    query_options: Mapping[str, Any] = field(default_factory=dict)
    case_options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """The result of scoring one query; ``score`` is on 0-100."""

    status: QueryStatus
    score: float | None
    raw_score: float | None
    reason: str | None
    log: tuple[str, ...] = ()


_new_object = object.__new__


def scored(score: float, raw: float) -> Outcome:
    """Return a scored outcome."""
    # The hot path of every built-in: filling __dict__ directly is 3x faster than the
    # frozen dataclass __init__ (one object.__setattr__ per field) and yields an equal object.
    outcome: Outcome = _new_object(Outcome)
    fields = outcome.__dict__
    fields["status"] = QueryStatus.SCORED
    fields["score"] = score
    fields["raw_score"] = raw
    fields["reason"] = None
    fields["log"] = ()
    return outcome


_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


def id_doc(doc_id: str) -> ScoreDoc:
    """Return a doc with an id and no fields: what the built-in metrics read of a stored doc."""
    # Built when re-scoring stored runs (hundreds of thousands of docs for a large case):
    # filling __dict__ directly skips the frozen dataclass __init__, as `scored` does.
    doc: ScoreDoc = _new_object(ScoreDoc)
    fields = doc.__dict__
    fields["id"] = doc_id
    fields["fields"] = _NO_FIELDS
    return doc


def unscored(reason: str, log: tuple[str, ...] = ()) -> Outcome:
    """Return an unscored outcome with its reason."""
    return Outcome(QueryStatus.UNSCORED, None, None, reason, log)


def failed(message: str, log: tuple[str, ...] = ()) -> Outcome:
    """Return an error outcome with its message."""
    return Outcome(QueryStatus.ERROR, None, None, message, log)

"""Plain data passed into and out of the scorers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from types import MappingProxyType
from typing import Any, NamedTuple, cast, overload

from app.vocabulary import QueryStatus


@dataclass(frozen=True)
class ScorerConfig:
    """A validated scorer: what to compute and on which rating scale."""

    kind: str
    scale: tuple[float, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    code: str | None = None
    max_score: float = 100.0
    # JavaScript only: "relevo" (SCORING.md) or "quepid" (what Quepid's browser computes).
    environment: str = "relevo"


_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


class ScoreDoc(NamedTuple):
    """One returned document: its id and the fields a JavaScript scorer may read.

    A tuple, not a dataclass: re-scoring a large run builds one per stored doc, and a
    tuple costs a fraction of a frozen dataclass to create.
    """

    id: str
    fields: Mapping[str, Any] = _NO_FIELDS


class StoredDocs:
    """Docs kept as dicts (``{"id", "fields", ...}``, as runs store them), seen as ScoreDocs.

    Built-in scorers read only the ids, straight from the dicts (``iter_ids``); a ScoreDoc is
    made only when one is asked for (a JavaScript scorer reads fields). Re-scoring a large
    run thus allocates nothing per doc, and the list of ids only when something asks for it.
    A plain class registered as a Sequence: inheriting from the ABC made each instance cost
    five times as much to create under the garbage collector, a large run holding many.
    """

    __slots__ = ("_docs", "_ids")

    def __init__(self, docs: Sequence[Mapping[str, Any]]) -> None:
        self._docs: Sequence[Mapping[str, Any]] | None = docs
        self._ids: list[str] | None = None

    @classmethod
    def of_ids(cls, ids: list[str]) -> StoredDocs:
        """Return docs known by their ids alone (no fields)."""
        docs = cls.__new__(cls)
        docs._docs = None
        docs._ids = ids
        return docs

    @property
    def ids(self) -> list[str]:
        """The ids in rank order."""
        ids = self._ids
        if ids is None:
            ids = self._ids = [d["id"] for d in self._docs or ()]
        return ids

    def iter_ids(self) -> Iterator[str]:
        """Return an iterator over the ids in rank order, without making a list of them."""
        docs = self._docs
        return iter(self.ids) if docs is None else map(_get_id, docs)

    def head_ids(self, depth: int | None) -> Iterator[str]:
        """Return an iterator over the first ``depth`` ids (every id when None)."""
        docs = self._docs
        if docs is None:
            return iter(self.ids[:depth])
        return map(_get_id, docs[:depth])

    def __len__(self) -> int:
        docs = self._docs
        return len(self.ids) if docs is None else len(docs)

    @overload
    def __getitem__(self, index: int) -> ScoreDoc: ...

    @overload
    def __getitem__(self, index: slice) -> list[ScoreDoc]: ...

    def __getitem__(self, index: int | slice) -> ScoreDoc | list[ScoreDoc]:
        docs = self._docs
        if isinstance(index, slice):
            if docs is None:
                return [ScoreDoc(doc_id) for doc_id in self.ids[index]]
            return [_score_doc(d) for d in docs[index]]
        return ScoreDoc(self.ids[index]) if docs is None else _score_doc(docs[index])

    def __iter__(self) -> Iterator[ScoreDoc]:
        if self._docs is None:
            return (ScoreDoc(doc_id) for doc_id in self.ids)
        return (_score_doc(d) for d in self._docs)

    def as_sequence(self) -> Sequence[ScoreDoc]:
        """Return these docs typed as the Sequence they behave as."""
        return cast(Sequence[ScoreDoc], self)


Sequence.register(StoredDocs)


_get_id = itemgetter("id")


def _score_doc(doc: Mapping[str, Any]) -> ScoreDoc:
    return ScoreDoc(doc["id"], doc.get("fields") or _NO_FIELDS)


def doc_ids(docs: Sequence[ScoreDoc]) -> Sequence[str]:
    """Return the ids of the docs, in rank order (without making ScoreDocs of stored ones)."""
    if isinstance(docs, StoredDocs):
        return docs.ids
    return [d.id for d in docs]


class QueryInput(NamedTuple):
    """Everything one query's score depends on.

    A tuple, not a frozen dataclass: re-scoring a run builds one per query, and a tuple is
    made in half the time (a tenth of the whole scoring pass).
    """

    docs: Sequence[ScoreDoc]
    ratings: Mapping[str, float]
    num_found: int | None = None
    query_options: Mapping[str, Any] = _NO_FIELDS
    case_options: Mapping[str, Any] = _NO_FIELDS
    text: str = ""  # the query's text, for scorers that read it (``query.query_text``)


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


def id_doc(doc_id: str) -> ScoreDoc:
    """Return a doc with an id and no fields: what the built-in metrics read of a stored doc."""
    return ScoreDoc(doc_id)


def unscored(reason: str, log: tuple[str, ...] = ()) -> Outcome:
    """Return an unscored outcome with its reason."""
    return Outcome(QueryStatus.UNSCORED, None, None, reason, log)


def failed(message: str, log: tuple[str, ...] = ()) -> Outcome:
    """Return an error outcome with its message."""
    return Outcome(QueryStatus.ERROR, None, None, message, log)

"""Reading a ratings file's lines: CSV (`query,docid,rating`) or TREC qrels.

Each reader yields the good lines one at a time and counts the bad ones with their line
numbers; nothing here touches the database.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from app.queries.bulk_lines import BulkLineError, parse_line

if TYPE_CHECKING:
    from _csv import Reader

__all__ = [
    "CSV_HEADER",
    "IDS_KIND",
    "MAX_DOC_ID_CHARS",
    "MAX_QUERY_CHARS",
    "QUERY_ONLY",
    "ErrorKind",
    "Extras",
    "Line",
    "LineErrors",
    "csv_lines",
    "doc_id_from_trec",
    "trec_doc_id",
    "trec_lines",
]

CSV_HEADER = ("query", "docid", "rating")
MAX_REPORTED = 100
MAX_QUERY_CHARS = 1000  # the sizes of the query text and doc id columns
MAX_DOC_ID_CHARS = 500


MAX_REPORTED_PER_KIND = 5
MAX_KINDS_SUMMARISED = 5


@dataclass
class ErrorKind:
    """Every bad line of one kind: how many, and the first one."""

    kind: str
    count: int
    first_line: int
    first_message: str


class LineErrors:
    """Bad lines: every one counted by kind; the first few of each kind kept (in file order,
    at most MAX_REPORTED), so a thousand lines with one problem do not bury the others."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: list[tuple[int, str]] = []
        self.kinds: dict[str, ErrorKind] = {}

    def append(self, error: tuple[int, str], kind: str | None = None) -> None:
        """Count a bad line; ``kind`` groups lines with the same problem (default: its text)."""
        self.count += 1
        key = kind or error[1]
        seen = self.kinds.get(key)
        if seen is None:
            self.kinds[key] = ErrorKind(key, 1, *error)
        else:
            seen.count += 1
        if len(self.kept) < MAX_REPORTED and self.kinds[key].count <= MAX_REPORTED_PER_KIND:
            self.kept.append(error)

    def summary(self) -> str:
        """Return the kinds of problems, most frequent first: "1,234 lines: the QID is not a
        query of this case (first: line 3, ...)"."""
        kinds = sorted(self.kinds.values(), key=lambda k: (-k.count, k.first_line))
        parts = [
            f"{k.count:,} {'line' if k.count == 1 else 'lines'}: {k.kind} "
            f"(first: line {k.first_line}, {k.first_message})"
            if k.kind != k.first_message
            else f"{k.count:,} {'line' if k.count == 1 else 'lines'}: {k.kind} "
            f"(first: line {k.first_line})"
            for k in kinds[:MAX_KINDS_SUMMARISED]
        ]
        rest = len(kinds) - MAX_KINDS_SUMMARISED
        if rest > 0:
            parts.append(f"{rest} other kinds of problems")
        return "; ".join(parts)


# The doc id of a staged line that only names a query (CSV "query,,"): never a real doc id,
# which is never empty.
QUERY_ONLY = ""
QUERY_ONLY_MARK = "-"  # what such a line's doc id is checked as


@dataclass(frozen=True)
class Line:
    """One good line of the file."""

    number: int
    query: str  # the query text (CSV) or the query id as text (TREC)
    doc_id: str
    rating: float


RATING_KIND = "the rating is not a number on the scorer's scale"
IDS_KIND = "the query or docid is empty, too long or holds a NUL"


def _rating(raw: str, low: float, high: float) -> tuple[float | None, str | None]:
    text = raw.strip()
    if not text:
        return None, "the rating is empty"
    try:
        value = float(text)
    except ValueError:
        return None, f"the rating {text!r} is not a number"
    if not math.isfinite(value):
        return None, f"the rating {text!r} is not a finite number"
    if not low <= value <= high:
        return None, f"the rating {text} is outside the scorer's scale [{low:g}, {high:g}]"
    return value, None


def _check_ids(number: int, query: str, doc_id: str) -> str | None:
    if not query:
        return "the query is empty"
    if not doc_id:
        return "the docid is empty"
    if "\x00" in query or "\x00" in doc_id:
        return "the line holds a NUL character"
    if len(query) > MAX_QUERY_CHARS:
        return f"the query is longer than {MAX_QUERY_CHARS} characters"
    if len(doc_id) > MAX_DOC_ID_CHARS:
        return f"the docid is longer than {MAX_DOC_ID_CHARS} characters"
    return None


def _header_problem(header: Sequence[str]) -> str | None:
    names = [h.strip().lower() for h in header]
    missing = [c for c in CSV_HEADER if c not in names]
    if not missing:
        return None
    found = ",".join(header)[:200]
    hint = ""
    if len(header) == 1:
        for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars")):
            if sep in header[0]:
                hint = f"; it looks separated by {name}: use commas"
                break
    return f"the header must name the columns query,docid,rating (found {found!r}{hint})"


# Optional CSV columns: a query's tags ("head,brand") and weight, set on the query.
Extras = dict[str, tuple[tuple[str, ...] | None, float | None]]


def csv_lines(
    stream: IO[str], low: float, high: float, errors: LineErrors, extras: Extras | None = None
) -> Iterator[Line]:
    """Yield the good lines of a CSV file; count the bad ones (and note tags and weights)."""
    reader = csv.reader(stream)
    columns = _read_header(reader, errors)
    if columns is None:
        return
    for number, row in _rows(reader, errors):
        line = _csv_line(number, row, columns, (low, high), errors, extras)
        if line is not None:
            yield line


@dataclass(frozen=True)
class _Columns:
    """Where a CSV file's columns are: the three it needs, and its optional tags and weight."""

    query: int
    doc_id: int
    rating: int
    tags: int | None
    weight: int | None

    @property
    def needed(self) -> int:
        """How many columns a line needs to hold the query, docid and rating."""
        return max(self.query, self.doc_id, self.rating) + 1

    @property
    def has_extras(self) -> bool:
        """Whether the file has a tags or a weight column."""
        return self.tags is not None or self.weight is not None


def _read_header(reader: Reader, errors: LineErrors) -> _Columns | None:
    """Return the header's columns, or None once the reason it is not one is counted."""
    try:
        header = next(reader)
    except StopIteration:
        errors.append(
            (1, "the file is empty: the first line must be the header query,docid,rating")
        )
        return None
    except csv.Error as exc:
        errors.append((1, f"the header is not valid CSV: {exc}"))
        return None
    problem = _header_problem(header)
    if problem is not None:
        errors.append((1, problem))
        return None
    return _columns(header)


def _columns(header: Sequence[str]) -> _Columns:
    """Return where a valid header's columns are."""
    names = [h.strip().lower() for h in header]
    query, doc_id, rating = (names.index(c) for c in CSV_HEADER)
    tags = names.index("tags") if "tags" in names else None
    weight = names.index("weight") if "weight" in names else None
    return _Columns(query, doc_id, rating, tags, weight)


def _rows(reader: Reader, errors: LineErrors) -> Iterator[tuple[int, list[str]]]:
    """Yield each row that is not blank with its line number; a row that is not valid CSV
    (e.g. a quote never closed: the rest is one bad field) is counted and ends the file."""
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            errors.append((start, f"not valid CSV: {exc}"))
            return
        number, start = start, reader.line_num + 1
        if any(cell.strip() for cell in row):  # blank lines are allowed
            yield number, row


def _csv_line(
    number: int,
    row: Sequence[str],
    columns: _Columns,
    scale: tuple[float, float],
    errors: LineErrors,
    extras: Extras | None,
) -> Line | None:
    """Return a CSV row's good line, or None once its problem is counted."""
    if len(row) < columns.needed:
        errors.append(
            (number, f"expected at least {columns.needed} columns, found {len(row)}"),
            f"fewer than {columns.needed} columns",
        )
        return None
    query, doc_id = row[columns.query].strip(), row[columns.doc_id].strip()
    if extras is not None and columns.has_extras:
        problem = _extras(row, columns.tags, columns.weight, query, extras)
        if problem:
            errors.append((number, problem))
            return None
    raw_rating = row[columns.rating]
    if query and not doc_id and not raw_rating.strip():
        return _query_only_line(number, query, errors)
    return _rated_line(number, query, doc_id, raw_rating, scale, errors)


def _query_only_line(number: int, query: str, errors: LineErrors) -> Line | None:
    """Return a line naming a query with no rating (Quepid's CSV export writes "toy story,,"):
    the query is created, nothing is rated; None once its problem is counted."""
    problem = _check_ids(number, query, QUERY_ONLY_MARK)
    if problem:
        errors.append((number, problem), IDS_KIND)
        return None
    return Line(number, query, QUERY_ONLY, 0.0)


def _rated_line(
    number: int,
    query: str,
    doc_id: str,
    raw_rating: str,
    scale: tuple[float, float],
    errors: LineErrors,
) -> Line | None:
    """Return a line rating a document, or None once its problem is counted."""
    problem = _check_ids(number, query, doc_id)
    value, rating_problem = _rating(raw_rating, *scale)
    if problem:
        errors.append((number, problem), IDS_KIND)
        return None
    if rating_problem:
        errors.append((number, rating_problem), RATING_KIND)
        return None
    assert value is not None
    return Line(number, query, doc_id, value)


def _extras(
    row: Sequence[str], ti: int | None, wi: int | None, query: str, extras: Extras
) -> str | None:
    """Record a line's tags and weight for its query; return the problem of a bad one."""
    tags_text = row[ti] if ti is not None and ti < len(row) else ""
    weight_text = row[wi] if wi is not None and wi < len(row) else ""
    if not tags_text.strip() and not weight_text.strip():
        return None
    try:
        line = parse_line(f"{query}\t{tags_text.replace(chr(9), ' ')}\t{weight_text}")
    except BulkLineError as exc:
        return str(exc)
    tags, weight = extras.get(query, (None, None))
    if line.tags:
        tags = tuple(dict.fromkeys((*(tags or ()), *line.tags)))
    extras[query] = (tags, line.weight if line.weight is not None else weight)
    return None


# TREC files separate their fields with whitespace: a doc id's whitespace (and its "%", so
# that the escape reads back unambiguously) goes out percent-escaped, in qrels and runs alike,
# so trec_eval still matches them; the qrels import reads the same escapes back.
_TREC_ESCAPES = {
    "%": "%25",
    " ": "%20",
    "\t": "%09",
    "\n": "%0A",
    "\r": "%0D",
    "\v": "%0B",
    "\f": "%0C",
}
_TREC_ESCAPE = str.maketrans(_TREC_ESCAPES)
_TREC_UNESCAPE = re.compile("|".join(re.escape(v) for v in _TREC_ESCAPES.values()))
_TREC_UNESCAPED = {v: k for k, v in _TREC_ESCAPES.items()}


def trec_doc_id(doc_id: str) -> str:
    """Return a doc id as a TREC file holds it (whitespace and "%" percent-escaped)."""
    return doc_id.translate(_TREC_ESCAPE)


def doc_id_from_trec(field: str) -> str:
    """Return the doc id a TREC file's field stands for (the escapes of trec_doc_id undone)."""
    if "%" not in field:
        return field
    return _TREC_UNESCAPE.sub(lambda m: _TREC_UNESCAPED[m.group(0)], field)


def trec_lines(stream: IO[str], low: float, high: float, errors: LineErrors) -> Iterator[Line]:
    """Yield the good lines of a TREC qrels file (`QID ITER DOCID RATING`); count the bad.

    A line whose first non-blank character is "#" is a comment and is skipped, as trec_eval skips it
    (a "#" inside a doc id is part of it).
    """
    seen_any = False
    for number, text in enumerate(stream, 1):
        if text.lstrip().startswith("#"):
            continue
        parts = text.split()
        if not parts:
            continue
        seen_any = True
        if len(parts) != 4:
            errors.append(
                (number, f"expected 4 fields (QID ITER DOCID RATING), found {len(parts)}"),
                "not 4 fields (QID ITER DOCID RATING)",
            )
            continue
        qid, _iteration, field, raw = parts
        line = _rated_line(number, qid, doc_id_from_trec(field), raw, (low, high), errors)
        if line is not None:
            yield line
    if not seen_any:
        errors.append((1, "the file is empty: expected lines QID 0 DOCID RATING"))

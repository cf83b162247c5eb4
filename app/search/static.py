"""Result files: a TREC run or a CSV of ranked docs per query, read line by line.

A ``static`` endpoint answers from such a file instead of a server. The readers here are
pure generators over text lines, so a file of any size is read in constant memory; what is
wrong with a line is reported with its 1-based line number and the line is skipped.

- TREC run: ``QID Q0 DOCID RANK SCORE TAG`` separated by whitespace. Ranked the way trec_eval
  ranks it: SCORE descending, ties by DOCID descending; the RANK column and the line order
  are not used (they are checked to be present, RANK to be an integer).
- CSV: a header naming at least ``query``, ``docid`` and ``rank`` (an integer ≥ 1); every
  other column is a display field of the doc. Ranked by ``rank`` ascending, stored as
  ``score = -rank`` so both kinds sort the same way. Quepid's static result file (header
  ``Query Text,Doc ID,Doc Position,...``, often with a space after each comma) is read
  too: its three columns stand for query, docid and rank, its other columns are fields
  (named as written, spaces around names and values trimmed).
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal

import httpx

from app.search.answers import Answer
from app.search.errors import RequestBuildError
from app.search.fieldspec import FieldSpec
from app.search.templates import RenderContext
from app.search.types import EndpointConfig, Engine, SearchRequest, SearchResult
from app.vocabulary import HttpMethod

__all__ = [
    "MAX_DOC_ID_CHARS",
    "MAX_QUERY_CHARS",
    "ResultFormat",
    "ResultLine",
    "StaticAdapter",
    "read_csv_results",
    "read_results",
    "read_trec_results",
]

ResultFormat = Literal["trec", "csv"]
MAX_DOC_ID_CHARS = 500
MAX_QUERY_CHARS = 2000
MAX_FIELD_CHARS = 10_000
Problem = tuple[int, str]


@dataclass(frozen=True)
class ResultLine:
    """One returned doc of one query, as the file gives it."""

    line: int
    query_key: str
    doc_id: str
    score: float
    fields: dict[str, Any] | None = None


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # PostgreSQL stores neither


def _unstorable(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def _check_names(query: str, doc_id: str) -> str | None:
    if not query:
        return "the query is empty"
    if len(query) > MAX_QUERY_CHARS:
        return f"the query is longer than {MAX_QUERY_CHARS} characters"
    if not doc_id:
        return "the doc id is empty"
    if len(doc_id) > MAX_DOC_ID_CHARS:
        return f"the doc id is longer than {MAX_DOC_ID_CHARS} characters"
    if _unstorable(query) or _unstorable(doc_id):
        return "the line holds a NUL or an unpaired surrogate character"
    return None


def _trec_line(number: int, text: str) -> ResultLine | str:
    parts = text.split()
    if len(parts) != 6:
        return f"expected 6 columns (QID Q0 DOCID RANK SCORE TAG), found {len(parts)}"
    qid, _q0, doc_id, rank, raw_score, _tag = parts
    problem = _check_names(qid, doc_id)
    if problem is not None:
        return problem
    try:
        int(rank)
    except ValueError:
        return f"RANK {rank!r} is not an integer"
    try:
        score = float(raw_score)
    except ValueError:
        return f"SCORE {raw_score!r} is not a number"
    if not math.isfinite(score):
        return f"SCORE {raw_score!r} is not a finite number"
    return ResultLine(number, qid, doc_id, score)


def read_trec_results(lines: Iterable[str], problems: list[Problem]) -> Iterator[ResultLine]:
    """Yield the good lines of a TREC run; append (line, message) for every bad one."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        parsed = _trec_line(number, text)
        if isinstance(parsed, str):
            problems.append((number, parsed))
        else:
            yield parsed


# Quepid's static result file names the three columns its own way.
_QUEPID_COLUMNS = {"query text": "query", "doc id": "docid", "doc position": "rank"}


def _is_quepid(header: list[str]) -> bool:
    return {name.strip().lower() for name in header} >= set(_QUEPID_COLUMNS)


def _column_names(header: list[str]) -> list[str]:
    """Return the header's names as rows are read: Relevo's lower-cased; Quepid's three
    columns as query, docid and rank, its field columns as written (a field spec names them)."""
    if not _is_quepid(header):
        return [name.strip().lower() for name in header]
    return [_QUEPID_COLUMNS.get(name.strip().lower(), name.strip()) for name in header]


def _csv_header(header: list[str]) -> str | None:
    names = _column_names(header)
    missing = [name for name in ("query", "docid", "rank") if name not in names]
    if missing:
        return (
            "the header must name the columns query,docid,rank (missing: "
            + ", ".join(missing)
            + "), or be Quepid's Query Text,Doc ID,Doc Position"
        )
    if len(set(names)) != len(names):
        return "the header names a column twice"
    return None


def _csv_row(number: int, row: list[str], names: list[str], trim: bool) -> ResultLine | str:
    if len(row) != len(names):
        return f"expected {len(names)} columns as in the header, found {len(row)}"
    values = dict(zip(names, (cell.strip() for cell in row) if trim else row, strict=True))
    query, doc_id, rank = values.pop("query"), values.pop("docid").strip(), values.pop("rank")
    problem = _check_names(query, doc_id)
    if problem is not None:
        return problem
    try:
        position = int(rank.strip())
    except ValueError:
        return f"rank {rank!r} is not an integer"
    if position < 1:
        return f"rank {position} is not 1 or more"
    fields = {name: value for name, value in values.items() if value != ""}
    if any(len(v) > MAX_FIELD_CHARS or _unstorable(v) for v in fields.values()):
        return f"a field is longer than {MAX_FIELD_CHARS} characters or holds a NUL"
    return ResultLine(number, query, doc_id, -float(position), fields or None)


def read_csv_results(stream: IO[str], problems: list[Problem]) -> Iterator[ResultLine]:
    """Yield the good rows of a result CSV; append (line, message) for every bad one.

    Line numbers are the file's (the header is line 1), also for quoted fields spanning lines.
    """
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        problems.append((1, "the file is empty; expected the header query,docid,rank"))
        return
    except csv.Error as exc:
        problems.append((1, f"the header is not valid CSV: {exc}"))
        return
    problem = _csv_header(header)
    if problem is not None:
        problems.append((1, problem))
        return
    names = _column_names(header)
    trim = _is_quepid(header)  # Quepid's files put a space after each comma
    while True:
        number = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append((number, f"not valid CSV: {exc}"))
            return
        if not any(cell.strip() for cell in row):
            continue
        parsed = _csv_row(number, row, names, trim)
        if isinstance(parsed, str):
            problems.append((number, parsed))
        else:
            yield parsed


def read_results(
    stream: IO[str], fmt: ResultFormat, problems: list[Problem]
) -> Iterator[ResultLine]:
    """Yield the good lines of a result file of either format; bad ones go to ``problems``."""
    if fmt == "csv":
        return read_csv_results(stream, problems)
    return read_trec_results(stream, problems)


class StaticAdapter:
    """A result file: read from the file uploaded, never over HTTP; no template is rendered."""

    engine = Engine.STATIC
    label = "Result file"
    answers_from_file = True
    needs_mapper = False
    holds_ubi_logs = False
    test_field_spec = "id:id"

    def default_template(self, method: HttpMethod) -> str:
        return "#$query##"  # never rendered: the file is read by the query text, as it says

    def query_method(self, method: HttpMethod) -> HttpMethod:
        return method  # nothing is sent

    def search_url(self, url: str) -> str:
        return url  # no URL: nothing is called

    def endpoint_url(self, search_url: str) -> str:
        return search_url

    def build_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
    ) -> httpx.Request:
        raise RequestBuildError("a result file endpoint is read from its file, not over HTTP")

    def build_ids_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
    ) -> httpx.Request:
        raise RequestBuildError(f"a {self.engine} endpoint cannot look docs up by id")

    async def parse(
        self, endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, *, explain: bool, rows: int
    ) -> SearchResult:
        raise RequestBuildError("a result file endpoint is read from its file, not over HTTP")

    def error_message(self, body: Any) -> str | None:
        return None

    def validate_template(self, template: str, ctx: RenderContext) -> None:
        return None  # never rendered

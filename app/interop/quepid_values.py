"""Reading a Quepid export's values: each with the path that names it in a refusal."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from app.errors import Invalid

MAX_QUERY_CHARS = 1000


MAX_DOC_ID_CHARS = 500


MAX_NAME_CHARS = 200


MAX_ROWS = 500


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


Loc = tuple[str | int, ...]


def _path(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _missing(loc: Loc) -> Invalid:
    return Invalid(loc, f'This is not a Quepid case export: "{_path(loc)}" is missing.')


def _wrong(loc: Loc, expected: str) -> Invalid:
    return Invalid(loc, f'"{_path(loc)}" must be {expected} in a Quepid case export.')


def _object(data: Any, loc: Loc) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _wrong(loc, "an object")
    return data


def _required(data: Mapping[str, Any], key: str, loc: Loc) -> Any:
    if key not in data or data[key] is None:
        raise _missing((*loc, key))
    return data[key]


def _text(value: Any, loc: Loc, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _wrong(loc, "text")
    return str(value)


def _json_object(value: Any, loc: Loc) -> dict[str, Any]:
    """Return Quepid options: an object, null, or (older versions) an object as JSON text."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise _wrong(loc, "a JSON object") from exc
    if not isinstance(value, dict):
        raise _wrong(loc, "a JSON object")
    return value


def _number(value: Any, loc: Loc) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError as exc:
            raise _wrong(loc, "a number") from exc
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _wrong(loc, "a number")
    return float(value)


def _clean_text(value: Any, loc: Loc) -> None:
    """Refuse what PostgreSQL cannot store: NUL characters and unpaired surrogates."""
    if isinstance(value, str):
        if "\x00" in value or _LONE_SURROGATE.search(value):
            raise Invalid(loc, f'"{_path(loc)}" contains a NUL character or an unpaired surrogate.')
    elif isinstance(value, dict):
        for key, item in value.items():
            _clean_text(key, loc)
            _clean_text(item, (*loc, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _clean_text(item, (*loc, index))


def decode(raw: bytes) -> Any:
    """Return the JSON value of an uploaded file, or 422 saying why it is not JSON."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Invalid((), f"The file is not UTF-8 text (byte {exc.start}).") from exc
    if not text.strip():
        raise Invalid((), "The file is empty; export the case from Quepid and upload that file.")

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise Invalid(
            (), f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise Invalid((), f"The file is not valid JSON: {exc}.") from exc


def _headers(value: Any, loc: Loc) -> dict[str, str]:
    """Return Quepid's custom headers (an object, or an object as JSON text)."""
    headers = _json_object(value, loc)
    result: dict[str, str] = {}
    for name, header in headers.items():
        if isinstance(header, dict | list) or header is None:
            raise _wrong((*loc, name), "text")
        result[str(name)] = str(header)
    return result


def _ratings(value: Any, loc: Loc) -> dict[str, float]:
    """Return doc id → rating from a list of {doc_id, rating} or an object doc id → rating."""
    if value is None:
        return {}
    if isinstance(value, dict):
        pairs: Iterator[tuple[Any, Any, Loc]] = (
            (doc, rating, (*loc, str(doc))) for doc, rating in value.items()
        )
    elif isinstance(value, list):
        pairs = (_rating_pair(item, (*loc, i)) for i, item in enumerate(value))
    else:
        raise _wrong(loc, "a list of ratings")
    ratings: dict[str, float] = {}
    for doc, rating, where in pairs:
        doc_id = _text(doc, (*where, "doc_id"))
        assert doc_id is not None
        if not doc_id or len(doc_id) > MAX_DOC_ID_CHARS:
            raise Invalid(
                (*where, "doc_id"), f"A doc id must have 1 to {MAX_DOC_ID_CHARS} characters."
            )
        if rating is None or rating == "":
            continue  # Quepid keeps "not rated yet" as a null rating
        ratings[doc_id] = _number(rating, (*where, "rating"))
    return ratings


def _rating_pair(item: Any, loc: Loc) -> tuple[Any, Any, Loc]:
    rating = _object(item, loc)
    return _required(rating, "doc_id", loc), rating.get("rating"), loc

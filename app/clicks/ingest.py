"""UBI 1.3.0 records: read from a body (one record, an array, NDJSON), checked, normalised.

Pure functions of plain data: no database. A record is checked against the required fields
and types of the UBI 1.3.0 query and event schemas; an optional field sent as null counts as
absent (UBI's own sample data sends `message: null`). `action_name` may be any string: the
schema's `oneOf` of its standard names and a plain string is read as `anyOf`, as its authors
mean it. Timestamps are ISO 8601 or epoch milliseconds.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

import orjson

__all__ = [
    "BadRecord",
    "Record",
    "event_row",
    "query_row",
    "read_records",
]

# Epoch milliseconds accepted: 1970 up to the year 9999.
MAX_EPOCH_MS = 253_402_300_799_999
SHORT = 100  # the schema's maxLength of ids and names
MAX_ORDINAL = 1_000_000  # a rank is a 32-bit integer in the database
BULK_ACTIONS = frozenset({"index", "create"})


class BadRecord(ValueError):
    """A record that breaks the UBI schema; the message says how."""


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a body: its 1-based position (line of NDJSON, item of an array)."""

    line: int
    value: Any = None
    error: str | None = None


def read_records(stream: IO[bytes], *, ndjson: bool) -> Iterator[Record]:
    """Yield the records of a body one at a time; NDJSON is read line by line."""
    if ndjson:
        yield from _ndjson(stream)
        return
    body = stream.read()
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        # Sent as JSON but written one record a line: read it as NDJSON.
        if b"\n" in body.strip():
            yield from _ndjson(io.BytesIO(body))
            return
        raise BadRecord(f"The body is not JSON: {exc}.") from exc
    items = data if isinstance(data, list) else [data]
    for number, item in enumerate(items, start=1):
        yield Record(line=number, value=item)


def _ndjson(stream: IO[bytes]) -> Iterator[Record]:
    for number, raw in enumerate(stream, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            yield Record(line=number, error="not a JSON value")
            continue
        # OpenSearch bulk files put an action line before each record: not a record.
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in BULK_ACTIONS:
            continue
        yield Record(line=number, value=value)


def parse_timestamp(value: Any) -> datetime:
    """Return an aware UTC datetime from ISO 8601 text or epoch milliseconds."""
    if isinstance(value, bool):
        raise BadRecord("timestamp must be ISO 8601 text or epoch milliseconds")
    if isinstance(value, int | float):
        if not 0 <= value <= MAX_EPOCH_MS:
            raise BadRecord("timestamp in epoch milliseconds is out of range")
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return parse_timestamp(int(text))
        try:
            parsed = datetime.fromisoformat(text)
            # A time without an offset is read as UTC, as OpenSearch's UBI plugin does.
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
        except (ValueError, OverflowError):
            raise BadRecord(f"timestamp {value[:40]!r} is not ISO 8601") from None
    raise BadRecord("timestamp must be ISO 8601 text or epoch milliseconds")


def _text(record: dict[str, Any], name: str, limit: int | None = SHORT) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRecord(f"{name} must be a string")
    if "\x00" in value:
        raise BadRecord(f"{name} contains a NUL character")
    if limit is not None and len(value) > limit:
        raise BadRecord(f"{name} is longer than {limit} characters")
    return value


def _object(record: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRecord(f"{name} must be an object")
    return value


def _require(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise BadRecord("a record must be a JSON object")
    missing = [name for name in names if record.get(name) is None]
    if missing:
        raise BadRecord(f"required field {missing[0]} is missing")
    return record


def digest(record: dict[str, Any]) -> str:
    """Return the SHA-256 of a record's canonical JSON: the same event sent twice matches."""
    return hashlib.sha256(orjson.dumps(record, option=orjson.OPT_SORT_KEYS)).hexdigest()


def query_row(record: Any) -> dict[str, Any]:
    """Return the stored columns of a UBI query record, or raise BadRecord."""
    record = _require(record, ("user_query",))
    user_query = _text(record, "user_query", limit=None)
    for name in ("application", "client_id", "object_id_field"):
        _text(record, name)
    _text(record, "query_response_id", limit=None)
    _object(record, "query_attributes")
    hits = record.get("query_response_hit_ids")
    if hits is not None and (
        not isinstance(hits, list) or not all(isinstance(h, str) for h in hits)
    ):
        raise BadRecord("query_response_hit_ids must be an array of strings")
    if hits is not None and any("\x00" in h for h in hits):
        raise BadRecord("query_response_hit_ids contains a NUL character")
    stamp = record.get("timestamp")
    query_id = _text(record, "query_id")
    return {
        "key": query_id if query_id is not None else "sha256:" + digest(record)[:60],
        "user_query": user_query,
        "application": record.get("application"),
        "client_id": record.get("client_id"),
        "timestamp": None if stamp is None else parse_timestamp(stamp),
        "hit_ids": hits,
    }


def _object_id(attributes: dict[str, Any]) -> str | None:
    found = _object(attributes, "object")
    if found is None:
        return None
    value = found.get("object_id")
    if value is None:
        raise BadRecord("event_attributes.object needs object_id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadRecord("event_attributes.object.object_id must be a string or an integer")
    if isinstance(value, str) and (len(value) > 256 or "\x00" in value):
        raise BadRecord(
            "event_attributes.object.object_id is longer than 256 characters or has NUL"
        )
    return str(value)


def _rank(attributes: dict[str, Any], position_base: int) -> int | None:
    position = attributes.get("position")
    if position is None:
        raise BadRecord("event_attributes needs position")
    if not isinstance(position, dict):
        raise BadRecord("event_attributes.position must be an object")
    ordinal = position.get("ordinal")
    xy = position.get("xy")
    if ordinal is None:
        if not isinstance(xy, dict) or not all(
            isinstance(xy.get(k), int | float) and not isinstance(xy.get(k), bool) for k in "xy"
        ):
            raise BadRecord("event_attributes.position needs ordinal or xy {x, y}")
        return None
    if isinstance(ordinal, bool) or not isinstance(ordinal, int):
        raise BadRecord("event_attributes.position.ordinal must be an integer")
    if ordinal > MAX_ORDINAL:
        raise BadRecord(f"ordinal {ordinal} is beyond {MAX_ORDINAL}")
    if ordinal < position_base:
        raise BadRecord(f"ordinal {ordinal} is below this log's position_base {position_base}")
    return ordinal - position_base + 1


def event_row(record: Any, *, position_base: int) -> dict[str, Any]:
    """Return the stored columns of a UBI event record, or raise BadRecord."""
    record = _require(record, ("action_name", "timestamp"))
    action = _text(record, "action_name")
    for name in ("application", "query_id", "session_id", "client_id", "user_id", "message_type"):
        _text(record, name)
    _text(record, "message", limit=1024)
    user_query = _text(record, "user_query", limit=None)
    attributes = _object(record, "event_attributes")
    object_id = None if attributes is None else _object_id(attributes)
    rank = None if attributes is None else _rank(attributes, position_base)
    return {
        "digest": digest(record),
        "action_name": action,
        "timestamp": parse_timestamp(record["timestamp"]),
        "query_id": record.get("query_id"),
        "client_id": record.get("client_id"),
        "session_id": record.get("session_id"),
        "application": record.get("application"),
        "user_query": user_query,
        "object_id": object_id,
        "rank": rank,
    }

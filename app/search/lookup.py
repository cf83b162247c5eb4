"""Fetching documents by id: request builders for every engine, pure functions of plain data.

Used to show rated documents that a run did not return. Elasticsearch and OpenSearch get an
``ids`` query when the field spec's id is ``_id`` and a ``terms`` query on the id field
otherwise; Solr gets the ``terms`` query parser on the id field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.search.errors import RequestBuildError
from app.search.fieldspec import FieldSpec

__all__ = ["MAX_LOOKUP_IDS", "build_es_ids_body", "build_solr_ids_params", "solr_separator"]

# One request fetches at most this many ids: the list under a query stays readable.
MAX_LOOKUP_IDS = 100
# Solr's terms parser splits on one separator; the first one no id contains is used.
_SEPARATORS = (",", "|", ";", "~", "^")


def _checked(ids: Sequence[str]) -> list[str]:
    if not ids:
        raise RequestBuildError("no document ids to fetch")
    if len(ids) > MAX_LOOKUP_IDS:
        raise RequestBuildError(f"at most {MAX_LOOKUP_IDS} ids are fetched at once")
    return list(ids)


def build_es_ids_body(ids: Sequence[str], spec: FieldSpec) -> dict[str, Any]:
    """Return the ``_search`` body fetching these ids with the spec's fields."""
    wanted = _checked(ids)
    if spec.id_field == "_id":
        query: dict[str, Any] = {"ids": {"values": wanted}}
    else:
        query = {"terms": {spec.id_field: wanted}}
    fields = [name for name in spec.all_fields() if not name.startswith("_")]
    return {"query": query, "size": len(wanted), "_source": fields if fields else False}


def solr_separator(ids: Sequence[str]) -> str:
    """Return a separator for the terms parser that no id contains; raise RequestBuildError."""
    for candidate in _SEPARATORS:
        if not any(candidate in doc_id for doc_id in ids):
            return candidate
    raise RequestBuildError("the document ids contain every separator Solr's terms parser takes")


def build_solr_ids_params(ids: Sequence[str], spec: FieldSpec) -> dict[str, str]:
    """Return the Solr 9 request parameters fetching these ids with the spec's fields."""
    wanted = _checked(ids)
    separator = solr_separator(wanted)
    local = f"{{!terms f={spec.id_field}}}"
    if separator != ",":
        local = f"{{!terms f={spec.id_field} separator='{separator}'}}"
    return {
        "q": local + separator.join(wanted),
        "rows": str(len(wanted)),
        "fl": ",".join(spec.all_fields()),
        "wt": "json",
    }

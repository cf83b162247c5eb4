"""Elasticsearch / OpenSearch: body building and response parsing (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from app.search import (
    EngineResponseError,
    SearchRequest,
    TemplateError,
    build_es_body,
    es_error_message,
    parse_es_response,
    parse_field_spec,
)

TEMPLATE = """{
  "query": {"multi_match": {"query": "#$query##", "fields": ["title^##title_boost##", "director"]}}
}"""


def request(**overrides: Any) -> SearchRequest:
    values: dict[str, Any] = {"template": TEMPLATE, "query_text": 'the "force"'}
    return SearchRequest(**{**values, **overrides})


def test_build_body() -> None:
    body = build_es_body(request(field_spec="id:_id title:title director genre", rows=5))
    assert body == {
        "query": {"multi_match": {"query": 'the "force"', "fields": ["title^10", "director"]}},
        "size": 5,
        "_source": ["title", "director", "genre"],
    }


def test_build_body_with_explain_and_no_source_fields() -> None:
    body = build_es_body(request(field_spec="id:_id", explain=True, knobs={"title_boost": 1.5}))
    assert body["explain"] is True
    assert body["_source"] is False
    assert body["query"]["multi_match"]["fields"][0] == "title^1.5"


def test_build_body_overrides_template_size_and_explain() -> None:
    template = '{"size": 100, "explain": true, "from": 10, "query": {"match_all": {}}}'
    body = build_es_body(request(template=template, rows=3))
    assert body == {"size": 3, "from": 10, "query": {"match_all": {}}, "_source": ["title"]}


def test_build_body_bad_json_is_a_template_error() -> None:
    with pytest.raises(TemplateError, match="line 1, column 11"):
        build_es_body(request(template='{"query": #$query##}'))


def hit(doc_id: str, source: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"_index": "movies", "_id": doc_id, "_score": 1.0, "_source": source, **extra}


def test_parse_total_as_object_nested_and_multi_valued_fields() -> None:
    spec = parse_field_spec("id:_id title:title cast.name genres meta.year thumb:poster")
    body = {
        "took": 2,
        "timed_out": False,
        "hits": {
            "total": {"value": 10000, "relation": "gte"},
            "max_score": 2.0,
            "hits": [
                hit(
                    "a1",
                    {
                        "title": "One",
                        "cast": [{"name": "Ann"}, {"name": "Bob"}],
                        "genres": ["Drama", "War"],
                        "meta": {"year": 1999},
                    },
                    _explanation={"value": 2.0, "description": "sum of:", "details": []},
                ),
                hit("a2", {"title": "Two", "meta.year": 2001, "poster": "http://img/2.jpg"}),
            ],
        },
    }
    result = parse_es_response(body, spec)
    assert result.num_found == 10000
    first, second = result.docs
    assert (first.id, first.position, second.id, second.position) == ("a1", 1, "a2", 2)
    assert first.fields == {
        "title": "One",
        "cast.name": ["Ann", "Bob"],
        "genres": ["Drama", "War"],
        "meta.year": 1999,
    }
    assert first.explain == {"value": 2.0, "description": "sum of:", "details": []}
    assert second.fields == {"title": "Two", "meta.year": 2001, "poster": "http://img/2.jpg"}
    assert second.explain is None


def test_parse_total_as_int_and_id_from_source() -> None:
    body = {"hits": {"total": 42, "hits": [hit("x", {"id": 7, "title": "Seven"})]}}
    result = parse_es_response(body, parse_field_spec("id:id title:title"))
    assert result.num_found == 42
    assert result.docs[0].id == "7"
    assert result.docs[0].fields == {"title": "Seven"}


def test_parse_without_total_counts_hits() -> None:
    body = {"hits": {"hits": [hit("x", {}), hit("y", {})]}}
    assert parse_es_response(body, parse_field_spec("id:_id")).num_found == 2


def test_parse_missing_id_field() -> None:
    body = {"hits": {"total": 3, "hits": [hit("1", {"id": "1"}), hit("2", {"title": "x"})]}}
    with pytest.raises(EngineResponseError, match=r"^doc 2 has no id field 'id'$"):
        parse_es_response(body, parse_field_spec("id:id title:title"))


@pytest.mark.parametrize("body", [None, [], {"hits": {}}, {"hits": {"total": "x", "hits": []}}])
def test_parse_unexpected_shape(body: Any) -> None:
    with pytest.raises(EngineResponseError):
        parse_es_response(body, parse_field_spec("id:_id"))


INDEX_NOT_FOUND = {
    "error": {
        "root_cause": [
            {
                "type": "index_not_found_exception",
                "reason": "no such index [nope]",
                "index": "nope",
            }
        ],
        "type": "index_not_found_exception",
        "reason": "no such index [nope]",
        "index": "nope",
    },
    "status": 404,
}
PARSING = {
    "error": {
        "root_cause": [{"type": "parsing_exception", "reason": "unknown query [bogus]"}],
        "type": "parsing_exception",
        "reason": "unknown query [bogus]",
        "line": 1,
        "col": 19,
        "caused_by": {
            "type": "named_object_not_found_exception",
            "reason": "[1:19] unknown field [bogus]",
        },
    },
    "status": 400,
}


def test_error_messages() -> None:
    assert es_error_message(INDEX_NOT_FOUND) == "index_not_found_exception: no such index [nope]"
    assert es_error_message(PARSING) == (
        "parsing_exception: unknown query [bogus] (line 1, column 19); "
        "caused by: [1:19] unknown field [bogus]"
    )
    assert es_error_message({"error": "IndexMissingException[[nope] missing]"}) == (
        "IndexMissingException[[nope] missing]"
    )
    assert es_error_message({"hits": {}}) is None


def test_parse_error_body() -> None:
    with pytest.raises(EngineResponseError, match=r"no such index \[nope\]"):
        parse_es_response(INDEX_NOT_FOUND, parse_field_spec("id:_id"))

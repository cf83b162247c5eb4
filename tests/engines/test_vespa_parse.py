"""The Vespa adapter's pure parts, and a live Vespa when VESPA_URL is set."""

from __future__ import annotations

import asyncio
import copy
import os

import httpx
import pytest

from app.search import EndpointConfig, EngineResponseError, SearchClient, SearchRequest
from app.search.fieldspec import parse_field_spec
from app.search.vespa import build_vespa_body, parse_vespa_response
from app.vocabulary import Engine
from tests.engines.fake_services import VESPA_ANSWER, VESPA_ERROR


def test_the_body_is_the_rendered_template_with_hits_set_to_rows() -> None:
    request = SearchRequest(
        template='{"yql": "select * from sources * where userQuery()", "query": "#$query##",'
        ' "ranking": "bm25", "hits": 99}',
        query_text='say "hi"',
        rows=3,
    )
    assert build_vespa_body(request) == {
        "yql": "select * from sources * where userQuery()",
        "query": 'say "hi"',
        "ranking": "bm25",
        "hits": 3,
    }


def test_hits_fields_relevance_and_summaryfeatures_as_explain() -> None:
    spec = parse_field_spec("id:documentid title relevance")
    result = parse_vespa_response(VESPA_ANSWER, spec, explain=True)
    assert result.num_found == 42
    assert [d.id for d in result.docs] == ["id:movies:movie::11", "id:movies:movie::1891"]
    assert result.docs[0].fields == {"title": "Star Wars", "relevance": 0.81}
    assert result.docs[0].explain == {"bm25(title)": 3.2, "vespa.summaryFeatures.cached": 0.0}
    assert result.docs[1].explain is None
    assert parse_vespa_response(VESPA_ANSWER, spec).docs[0].explain is None


def test_no_children_is_zero_results_and_errors_raise() -> None:
    empty = {"root": {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount": 0}}}
    assert parse_vespa_response(empty, parse_field_spec("id:id")).docs == []
    with pytest.raises(EngineResponseError, match="Expected operator"):
        parse_vespa_response(VESPA_ERROR, parse_field_spec("id:id"))
    no_id = copy.deepcopy(VESPA_ANSWER)
    with pytest.raises(EngineResponseError, match="no id field 'isbn'"):
        parse_vespa_response(no_id, parse_field_spec("id:isbn"))
    with pytest.raises(EngineResponseError):
        parse_vespa_response({"root": {"children": "x"}}, parse_field_spec("id:id"))


@pytest.mark.skipif(not os.environ.get("VESPA_URL"), reason="set VESPA_URL to a Vespa container")
def test_a_live_vespa_answers() -> None:
    endpoint = EndpointConfig(Engine.VESPA, os.environ["VESPA_URL"])
    request = SearchRequest(
        template='{"yql": "select * from sources * where true"}', query_text="x", field_spec="id:id"
    )

    async def go() -> int:
        async with httpx.AsyncClient() as http:
            return (await SearchClient(http).search(endpoint, request)).num_found

    assert asyncio.run(go()) >= 0

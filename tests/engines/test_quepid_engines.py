"""Quepid case exports on search API and static endpoints import instead of being refused."""

from __future__ import annotations

import copy
from typing import Any

from tests.fixtures.users import ApiUser
from tests.support.mappers import QUEPID_MAPPER
from tests.support.quepid import fixture, imported, post


def _export(engine: str, url: str, mapper_code: str | None) -> dict[str, Any]:
    data = copy.deepcopy(fixture("movies_es_case.json"))
    endpoint = data["try"]["search_endpoint"]
    endpoint.update(search_engine=engine, endpoint_url=url, mapper_code=mapper_code)
    data["try"]["query_params"] = "q=#$query##"
    data["try"]["field_spec"] = "id:id title"
    return data


def _endpoint_of(api: ApiUser, case: dict[str, Any]) -> dict[str, Any]:
    endpoint_id = case["search_endpoint_id"]
    result: dict[str, Any] = api.get(f"/api/v1/search-endpoints/{endpoint_id}").json()
    return result


def test_searchapi_carries_its_mapper_and_is_reused_only_when_all_match(api: ApiUser) -> None:
    url = "http://127.0.0.1:9/api"
    first = imported(api, _export("searchapi", url, QUEPID_MAPPER))
    endpoint = _endpoint_of(api, first)
    assert (endpoint["engine"], endpoint["url"]) == ("searchapi", url)
    assert endpoint["mapper_code"] == QUEPID_MAPPER

    same = imported(api, _export("searchapi", url, QUEPID_MAPPER))
    assert same["search_endpoint_id"] == first["search_endpoint_id"]
    other_code = imported(api, _export("searchapi", url, QUEPID_MAPPER + "\n// v2"))
    assert other_code["search_endpoint_id"] != first["search_endpoint_id"]
    assert _endpoint_of(api, other_code)["mapper_code"].endswith("// v2")


def test_a_searchapi_export_without_mapper_code_is_refused(api: ApiUser) -> None:
    response = post(api, _export("searchapi", "http://127.0.0.1:9/api", None))
    assert response.status_code == 422
    assert "mapper_code" in response.text


def test_a_static_export_becomes_a_result_file_endpoint(api: ApiUser) -> None:
    case = imported(api, _export("static", "http://quepid.example/static", None))
    endpoint = _endpoint_of(api, case)
    assert (endpoint["engine"], endpoint["url"], endpoint["has_results"]) == ("static", "", False)
    again = imported(api, _export("static", "", None))
    assert again["search_endpoint_id"] == case["search_endpoint_id"]

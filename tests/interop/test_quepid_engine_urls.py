"""A Quepid file carries the URL a query is sent to and its method, as each engine has them;
Relevo keeps the endpoint's own URL and gives Quepid's back on export."""

from __future__ import annotations

from typing import Any

from tests.fixtures.users import ApiUser
from tests.support.quepid import export, fixture, imported


def _case(engine: str, url: str, method: str, template: str, **extra: Any) -> dict[str, Any]:
    data = fixture("movies_es_case.json")
    data["try"]["query_params"] = template
    data["try"]["search_endpoint"].update(
        {"search_engine": engine, "endpoint_url": url, "api_method": method, **extra}
    )
    return data


def _endpoint(api: ApiUser, case: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = api.get(f"/api/v1/search-endpoints/{case['search_endpoint_id']}").json()
    return found


def test_a_vespa_case_is_searched_at_its_search_path_and_exported_so(api: ApiUser) -> None:
    template = '{"yql": "select * from sources * where userQuery()", "query": "#$query##"}'
    case = imported(api, _case("vespa", "http://vespa.test:8080/search/", "POST", template))
    assert _endpoint(api, case)["url"] == "http://vespa.test:8080"
    sent = export(api, case["id"])["try"]["search_endpoint"]
    assert (sent["endpoint_url"], sent["api_method"]) == ("http://vespa.test:8080/search/", "POST")


def test_a_get_search_api_case_keeps_its_url_and_method(api: ApiUser) -> None:
    mapper = "docsMapper = function(data) { return []; };"
    url = "http://api.test/v2/_search"  # a path of its own, called as it is
    case = imported(api, _case("searchapi", url, "GET", "q=#$query##", mapper_code=mapper))
    endpoint = _endpoint(api, case)
    assert (endpoint["url"], endpoint["method"]) == (url, "GET")
    sent = export(api, case["id"])["try"]["search_endpoint"]
    assert (sent["endpoint_url"], sent["api_method"]) == (url, "GET")
    assert sent["mapper_code"] == mapper

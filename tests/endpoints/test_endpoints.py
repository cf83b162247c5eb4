"""Search endpoints over the API: secrets are write-only, others' endpoints are 404."""

from __future__ import annotations

from tests.fixtures.users import ApiUser
from tests.support.api import make_endpoint


def test_secrets_are_never_returned(api: ApiUser) -> None:
    created = make_endpoint(
        api,
        "http://127.0.0.1:9200/movies",
        headers={"X-Api-Token": "s3cret-header"},
        basic_auth="user:pa55word",
    )
    assert created["header_names"] == ["X-Api-Token"]
    assert created["has_basic_auth"] is True
    body = api.get(f"/api/v1/search-endpoints/{created['id']}").text
    listing = api.get("/api/v1/search-endpoints").text
    for text in (body, listing):
        assert "s3cret-header" not in text and "pa55word" not in text
    assert "headers" not in created and "basic_auth" not in created


def test_defaults_and_patch(api: ApiUser) -> None:
    created = make_endpoint(api, "http://127.0.0.1:9200/movies/")
    assert created["url"] == "http://127.0.0.1:9200/movies"
    assert (
        created["method"],
        created["timeout_s"],
        created["requests_per_minute"],
        created["max_concurrency"],
    ) == ("GET", 10.0, 0, 8)
    patched = api.patch(
        f"/api/v1/search-endpoints/{created['id']}",
        json={"max_concurrency": 2, "basic_auth": "a:b"},
    ).json()
    assert patched["max_concurrency"] == 2 and patched["has_basic_auth"] is True
    cleared = api.patch(f"/api/v1/search-endpoints/{created['id']}", json={"basic_auth": ""})
    assert cleared.json()["has_basic_auth"] is False


def test_bad_values_are_422(api: ApiUser) -> None:
    for body, field in [
        ({"name": "x", "engine": "solr", "url": "ftp://x/y"}, "url"),
        (
            {"name": "x", "engine": "solr", "url": "http://x:8983/solr", "max_concurrency": 0},
            "max_concurrency",
        ),
        (
            {"name": "x", "engine": "solr", "url": "http://x:8983/solr", "basic_auth": "nocolon"},
            "basic_auth",
        ),
        ({"name": "", "engine": "solr", "url": "http://x:8983/solr"}, "name"),
    ]:
        response = api.post("/api/v1/search-endpoints", json=body)
        assert response.status_code == 422, body
        assert ["body", field] in [e["loc"] for e in response.json()["detail"]]


def test_another_users_endpoint_is_404(api: ApiUser, other_api: ApiUser) -> None:
    theirs = make_endpoint(other_api, "http://127.0.0.1:9200/movies")
    path = f"/api/v1/search-endpoints/{theirs['id']}"
    assert api.get(path).status_code == 404
    assert api.patch(path, json={"name": "mine"}).status_code == 404
    assert api.delete(path).status_code == 404
    assert api.get("/api/v1/search-endpoints").json() == []
    assert other_api.get(path).json()["name"] == "movies"


def test_test_connection_reports_hits_or_the_error(
    api: ApiUser, movies_engine: object, engine_down_url: str
) -> None:
    good = make_endpoint(api, movies_engine.index_url)  # type: ignore[attr-defined]
    report = api.post(
        f"/api/v1/search-endpoints/{good['id']}/test", json={"query": "star wars"}
    ).json()
    assert report["ok"] is True and report["num_found"] > 0
    assert "star" in report["sample"]["fields"]["title"].lower()
    down = make_endpoint(api, engine_down_url + "/movies")
    report = api.post(f"/api/v1/search-endpoints/{down['id']}/test", json={}).json()
    assert report["ok"] is False and report["message"]


def test_ids_too_large_for_any_row_are_404_not_500(api: ApiUser) -> None:
    huge = 10**20
    for path in (
        f"/api/v1/cases/{huge}",
        f"/api/v1/scorers/{huge}",
        f"/api/v1/search-endpoints/{huge}",
    ):
        assert api.get(path).status_code == 404
    assert api.delete(f"/api/v1/api-keys/{huge}").status_code == 404
    body = {"name": "x", "search_endpoint_id": huge, "query_template": "q=#$query##"}
    assert api.post("/api/v1/cases", json=body).status_code == 404


def test_nul_characters_and_bad_header_names_are_422(api: ApiUser) -> None:
    nul = api.post(
        "/api/v1/search-endpoints",
        json={"name": "a\x00b", "engine": "solr", "url": "http://a:8983/solr/x"},
    )
    assert nul.status_code == 422
    header = api.post(
        "/api/v1/search-endpoints",
        json={
            "name": "x",
            "engine": "solr",
            "url": "http://a:8983/solr/x",
            "headers": {"bad\nname": "v"},
        },
    )
    assert header.status_code == 422
    assert header.json()["detail"][0]["loc"] == ["body", "headers"]
    assert api.get("/api/v1/search-endpoints").json() == []


def test_moving_to_another_origin_drops_secrets_unless_resent(api: ApiUser) -> None:
    created = make_endpoint(
        api, "http://127.0.0.1:9200/movies", headers={"X-Key": "k"}, basic_auth="u:p"
    )
    url = f"/api/v1/search-endpoints/{created['id']}"
    same_origin = api.patch(url, json={"url": "http://127.0.0.1:9200/films"}).json()
    assert same_origin["header_names"] == ["X-Key"] and same_origin["has_basic_auth"] is True
    resent = api.patch(
        url, json={"url": "http://127.0.0.1:9201/films", "headers": {"X-Key": "k2"}}
    ).json()
    assert resent["header_names"] == ["X-Key"] and resent["has_basic_auth"] is False
    moved = api.patch(url, json={"url": "https://attacker.example.com/films"}).json()
    assert moved["header_names"] == [] and moved["has_basic_auth"] is False


def test_credentials_in_the_url_become_basic_auth(api: ApiUser) -> None:
    created = make_endpoint(api, "http://bob:s3cret@127.0.0.1:9200/movies")
    assert created["url"] == "http://127.0.0.1:9200/movies"
    assert created["has_basic_auth"] is True
    both = api.post(
        "/api/v1/search-endpoints",
        json={
            "name": "both",
            "engine": "elasticsearch",
            "url": "http://bob:s3cret@127.0.0.1:9200/movies",
            "basic_auth": "a:b",
        },
    )
    assert both.status_code == 422
    assert "s3cret" not in both.text

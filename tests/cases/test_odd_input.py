"""Odd input is a clean 4xx, never a 500: NUL, lone surrogates, NaN, huge options."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint


def test_nul_in_the_query_string_is_400(api: ApiUser) -> None:
    answer = api.get("/api/v1/cases?q=a%00b")
    assert answer.status_code == 400
    assert set(answer.json()) == {"detail"}


def test_nan_and_infinity_in_options_and_knobs_are_422(api: ApiUser) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9200/movies")
    case = make_case(api, endpoint["id"])
    for raw in ['{"options": {"k": NaN}}', '{"knobs": {"boost": Infinity}}']:
        answer = api.patch(
            f"/api/v1/cases/{case['id']}",
            content=raw,
            headers={"Content-Type": "application/json"},
        )
        assert answer.status_code == 422, answer.text


def test_lone_surrogate_in_an_endpoint_header_is_422(api: ApiUser) -> None:
    raw = (
        '{"name": "x", "engine": "elasticsearch", "url": "http://127.0.0.1:9200/m",'
        ' "headers": {"X-Key": "a\\ud800b"}}'
    )
    answer = api.post(
        "/api/v1/search-endpoints", content=raw, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422


def test_options_have_a_size_limit(api: ApiUser) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9200/movies")
    case = make_case(api, endpoint["id"])
    big = {"options": {"blob": "x" * (70 * 1024)}}
    assert api.patch(f"/api/v1/cases/{case['id']}", json=big).status_code == 422


def test_login_page_with_nul_in_next_is_not_500(client: TestClient) -> None:
    assert client.get("/login?next=/a%00").status_code == 400


def test_knobs_are_bounded_and_a_template_keeps_its_line_ends_apart(api: ApiUser) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9200/movies")
    case = make_case(api, endpoint["id"], query_template='{"size": ##size##}')
    url = f"/api/v1/cases/{case['id']}"
    for value in (1e308, -1, 1_000_000_001):
        answer = api.patch(url, json={"knobs": {"size": value}})
        assert answer.status_code == 422, answer.text
        assert "from 0 to 1,000,000,000" in answer.text
    assert api.patch(url, json={"knobs": {"size": 1e9}}).json()["knobs"] == {"size": 1e9}
    sweep = api.post(f"{url}/sweeps", json={"knobs": {"size": [1, -2]}})
    assert sweep.status_code == 422 and "from 0 to 1,000,000,000" in sweep.text
    # CRLF or CR line ends are the same template as LF ones: no new try.
    tries = api.get(url).json()["try_number"]
    lf = '{\n  "size": ##size##\n}'
    assert api.patch(url, json={"query_template": lf}).json()["try_number"] == tries + 1
    crlf = api.patch(url, json={"query_template": lf.replace("\n", "\r\n")}).json()
    assert crlf["try_number"] == tries + 1 and crlf["query_template"] == lf

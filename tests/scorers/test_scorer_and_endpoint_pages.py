"""Scorer and search endpoint pages."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    login,
    make_endpoint,
    movies_case,
    one,
    scorer_id,
    soup,
)

JS = 'console.log("docs: " + docs.length);\nsetScore(docs.length * 10);\n'


def _editor_values(page: Any) -> dict[str, str]:
    form = one(page, "#scorer-form")
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {str(t["name"]): t.get_text() for t in form.select("textarea[name]")}
    kind = form.select_one("select[name=kind]")
    if kind is not None:
        values["kind"] = str(one(kind, "option[selected]")["value"])
    return values


def test_scorers_list_shows_presets_and_own(api: ApiUser, client: TestClient) -> None:
    api.post(
        "/api/v1/scorers", json={"name": "Mine", "kind": "javascript", "code": JS, "scale": [0, 1]}
    )
    login(client)
    page = soup(client.get("/scorers"))
    presets = [a.get_text() for a in page.select("#preset-scorers td a")]
    assert "Classic" in presets and "NDCG@10" in presets
    assert [a.get_text() for a in page.select("#own-scorers td a")] == ["Mine"]


def test_scorer_editor_creates_and_reports_syntax_errors_with_the_line(
    api: ApiUser, client: TestClient
) -> None:
    login(client)
    values = _editor_values(soup(client.get("/scorers/new")))
    assert values["kind"] == "javascript" and "setScore" in values["code"]
    broken = client.post(
        "/scorers",
        data={**values, "name": "Broken", "action": "save", "code": "var x = 1;\nsetScore(;\n"},
    )
    assert broken.status_code == 422
    message = one(soup(broken), ".field-error[data-field=code]").get_text()
    assert "line 2" in message
    assert one(soup(broken), "textarea[name=code]").get_text() == "var x = 1;\nsetScore(;\n"
    saved = client.post(
        "/scorers",
        data={**values, "name": "Counts", "code": JS, "labels": "0=No\n1=Yes", "action": "save"},
        follow_redirects=False,
    )
    assert saved.status_code == 303
    mine = next(s for s in api.get("/api/v1/scorers").json() if s["name"] == "Counts")
    assert mine["scale"] == [0.0, 1.0] and mine["scale_labels"] == {"0": "No", "1": "Yes"}
    page = soup(client.get(saved.headers["location"]))
    assert one(page, "h1").get_text(strip=True) == "Counts"


def test_try_panel_shows_score_and_console_output(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars"])
    finished_run(
        session_factory,
        case_id,
        {ids["star wars"]: {"status": "unscored", "docs": [doc("1", "A", 1), doc("2", "B", 2)]}},
        scorer=scorer_id(api, "Classic"),
    )
    login(client)
    values = _editor_values(soup(client.get("/scorers/new")))
    response = client.post(
        "/scorers",
        data={
            **values,
            "name": "T",
            "code": JS,
            "action": "try",
            "try_query_id": str(ids["star wars"]),
        },
    )
    assert response.status_code == 200
    result = one(soup(response), "#try-result")
    assert result["data-status"] == "scored"
    assert one(result, ".badge").get_text(strip=True) == "20"
    assert one(result, "#try-console").get_text().strip() == "docs: 2"
    assert api.get("/api/v1/scorers").json()[-1]["name"] != "T"  # trying stores nothing


def test_presets_are_read_only_in_the_editor(api: ApiUser, client: TestClient) -> None:
    login(client)
    page = soup(client.get(f"/scorers/{scorer_id(api, 'NDCG@10')}"))
    assert one(page, "input[name=name]").has_attr("readonly")
    assert page.select("button[value=save]") == []
    assert "k=10" in one(page, "textarea[name=params]").get_text()


def test_endpoint_forms_keep_secrets_write_only(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    created = client.post(
        "/endpoints",
        data={
            "csrf_token": token,
            "name": "Prod",
            "engine": "elasticsearch",
            "url": "http://127.0.0.1:9/idx",
            "method": "POST",
            "headers": "X-Api-Key: s3cret",
            "basic_auth": "u:p",
            "timeout_s": "5",
            "requests_per_minute": "0",
            "max_concurrency": "4",
        },
        follow_redirects=False,
    )
    assert created.status_code == 303
    response = client.get(created.headers["location"])
    page = soup(response)
    assert "s3cret" not in response.text and "u:p" not in response.text
    assert one(page, ".header-names").get_text() == "X-Api-Key"
    assert one(page, ".basic-auth-set").get_text() == "basic auth set"
    assert one(page, "textarea[name=headers]").get_text() == ""
    inputs = page.select("#endpoint-form input[name]:not([type=checkbox])")
    values = {str(i["name"]): str(i.get("value", "")) for i in inputs}
    values |= {"engine": "elasticsearch", "method": "POST", "headers": "", "name": "Renamed"}
    saved = client.post(created.headers["location"], data=values, follow_redirects=False)
    assert saved.status_code == 303
    endpoint = api.get("/api/v1/search-endpoints").json()[0]
    assert endpoint["name"] == "Renamed"
    assert endpoint["header_names"] == ["X-Api-Key"] and endpoint["has_basic_auth"]
    bad = client.post(created.headers["location"], data={**values, "url": "ftp://nope"})
    assert bad.status_code == 422
    assert one(soup(bad), ".field-error[data-field=url]")


def test_test_connection_shows_hits_and_a_sample_or_the_error(
    api: ApiUser, client: TestClient, movies_engine: Any, engine_down_url: str
) -> None:
    good = make_endpoint(api, movies_engine.index_url)
    down = make_endpoint(api, f"{engine_down_url}/movies")
    token = login(client)
    ok = soup(
        client.post(
            f"/endpoints/{good['id']}/test", data={"csrf_token": token, "query": "star wars"}
        )
    )
    report = one(ok, "#test-report")
    assert report["data-ok"] == "true"
    assert int(one(report, ".hit-count").get_text()) > 0
    assert [dt.get_text() for dt in report.select(".sample dt")][:2] == ["id", "title"]
    failed = soup(client.post(f"/endpoints/{down['id']}/test", data={"csrf_token": token}))
    assert one(failed, "#test-report")["data-ok"] == "false"
    assert one(failed, ".report-message").get_text().strip()


def test_try_on_another_users_query_does_not_name_their_case(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    other_case = movies_case(other_api)
    other_query = add_queries(other_api, other_case, ["secret"])["secret"]
    login(client)
    values = _editor_values(soup(client.get("/scorers/new")))
    data = {**values, "name": "T", "code": JS, "action": "try", "try_query_id": str(other_query)}
    response = client.post("/scorers", data=data)
    assert response.status_code == 404
    text = one(soup(response), "main").get_text()
    assert f"No query with id {other_query}." in text
    assert "case with id" not in text

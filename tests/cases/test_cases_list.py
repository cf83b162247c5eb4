"""The cases list and the new-case form."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    finished_run,
    login,
    make_endpoint,
    movies_case,
    one,
    scorer_id,
    soup,
    template_context,
)


def test_cases_list_shows_badge_sparkline_and_query_count(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "batman", "alien"])
    classic = scorer_id(api, "Classic")
    for score in (20.0, 45.0, 81.6):
        finished_run(
            session_factory,
            case_id,
            {ids["alien"]: {"score": score}},
            scorer=classic,
            case_score=score,
        )
    login(client)
    page = soup(client.get("/"))
    row = one(page, f"tr.case-row[data-case-id='{case_id}']")
    badge = one(row, ".badge")
    assert badge.get_text(strip=True) == "82"
    assert "--hue: 98" in str(badge["style"])  # round(81.6 * 1.2)
    points = str(one(row, "svg.sparkline polyline")["points"]).split()
    assert len(points) == 3
    heights = [float(p.split(",")[1]) for p in points]
    assert heights[0] > heights[1] > heights[2]  # a rising score draws a rising line
    assert one(row, ".query-count").get_text(strip=True) == "3"
    assert one(row, ".case-name a")["href"] == f"http://testserver/cases/{case_id}"


def test_a_case_without_runs_shows_an_empty_badge(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api)
    login(client)
    row = one(soup(client.get("/")), f"tr.case-row[data-case-id='{case_id}']")
    assert "none" in one(row, ".badge")["class"]
    assert row.select("svg.sparkline polyline") == []


def test_the_new_case_form_creates_a_case(api: ApiUser, client: TestClient) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    token = login(client)
    form = one(soup(client.get("/")), "#new-case-form")
    assert form.select("input[name=csrf_token]")
    template = one(form, "textarea[name=query_template]").get_text()
    assert "#$query##" in template
    response = client.post(
        "/cases",
        data={
            "csrf_token": token,
            "name": "From the form",
            "search_endpoint_id": endpoint["id"],
            "query_template": "",
            "field_spec": "id:_id title:title",
            "rows": "5",
            "scorer_id": scorer_id(api, "P@10"),
        },
        follow_redirects=False,
    )
    assert response.status_code == 303
    created = api.get("/api/v1/cases").json()[0]
    assert created["name"] == "From the form" and created["rows"] == 5
    assert "#$query##" in created["query_template"]  # empty means the engine's default
    assert response.headers["location"].endswith(f"/cases/{created['id']}")


def test_a_bad_new_case_is_shown_again_with_its_message(api: ApiUser, client: TestClient) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    token = login(client)
    response = client.post(
        "/cases",
        data={
            "csrf_token": token,
            "name": "Broken",
            "search_endpoint_id": endpoint["id"],
            "query_template": '{"query": ',
            "field_spec": "id:_id title:title",
            "rows": "0",
        },
    )
    assert response.status_code == 422
    page = soup(response)
    assert one(page, ".field-error[data-field=rows]")
    assert one(page, "#new-case-form input[name=name]")["value"] == "Broken"
    assert api.get("/api/v1/cases").json() == []


def test_the_cases_json_twin_agrees_with_the_page(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "batman"])
    finished_run(
        session_factory,
        case_id,
        {ids["batman"]: {"score": 40.0}},
        scorer=scorer_id(api, "Classic"),
        case_score=40.0,
    )
    login(client)
    response = client.get("/")
    page = soup(response)
    twin = one(page, "link[rel=alternate][type='application/json']")["href"]
    data = api.get(str(twin)).json()
    assert template_context(response)["page"].model_dump(mode="json") == data
    row = one(page, f"tr.case-row[data-case-id='{case_id}']")
    [case] = data["cases"]
    assert case["query_count"] == int(one(row, ".query-count").get_text())
    assert round(case["last_score"]) == int(one(row, ".badge").get_text())
    assert [p["score"] for p in case["history"]] == [40.0]

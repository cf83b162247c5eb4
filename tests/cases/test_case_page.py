"""The case page: score panel, query list (sort, filter, pages), settings, history, twins."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
    template_context,
)


def _scored_case(api: ApiUser, factory: sessionmaker[Session]) -> tuple[int, dict[str, int], int]:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "batman", "alien", "zzz"])
    outcomes: dict[int, dict[str, Any]] = {
        ids["star wars"]: {
            "score": 90.0,
            "docs": [doc("1", "A New Hope", 1), doc("2", "Empire", 2)],
            "num_found": 42,
        },
        ids["batman"]: {"score": 30.4, "docs": [doc("3", "Batman", 1)], "num_found": 7},
        ids["alien"]: {"status": "unscored", "docs": [doc("4", "Alien", 1)], "num_found": 3},
        ids["zzz"]: {"status": "error", "error": "engine said no", "num_found": None},
    }
    run_id = finished_run(
        factory, case_id, outcomes, scorer=scorer_id(api, "Classic"), case_score=60.2
    )
    return case_id, ids, run_id


def _texts(page: Any) -> list[str]:
    return [a.get_text(strip=True) for a in page.select("#query-list .query-text")]


def test_case_page_shows_score_counts_scorer_and_try(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids, _run = _scored_case(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    panel = one(page, "#case-score")
    assert one(panel, "#case-score-value").get_text(strip=True) == "60"
    assert one(panel, ".unscored-count").get_text() == "1"
    assert one(panel, ".error-count").get_text() == "1"
    assert one(page, ".scorer-name").get_text() == "Classic"
    assert one(page, ".try-number").get_text() == "1"
    row = one(page, f"#query-{ids['star wars']}")
    assert one(row, f"#query-score-{ids['star wars']}").get_text(strip=True) == "90"
    assert one(row, ".num-found").get_text(strip=True) == "42 found"
    assert one(row, f"#query-unrated-{ids['star wars']}").get_text(strip=True) == "2 unrated"
    assert one(page, f"#query-{ids['zzz']} .tag-error")["title"] == "engine said no"
    assert one(page, "#run-form input[name=csrf_token]")
    assert one(page, "#runs tbody tr td.status").get_text() == "finished"


def test_queries_sort_and_filter_without_javascript(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, _ids, _run = _scored_case(api, session_factory)
    login(client)
    assert _texts(soup(client.get(f"/cases/{case_id}"))) == ["star wars", "batman", "alien", "zzz"]
    by_score = _texts(soup(client.get(f"/cases/{case_id}?sort=score")))
    assert by_score == ["batman", "star wars", "alien", "zzz"]  # lowest first, unscored last
    assert _texts(soup(client.get(f"/cases/{case_id}?sort=score_desc")))[:2] == [
        "star wars",
        "batman",
    ]
    assert _texts(soup(client.get(f"/cases/{case_id}?sort=text"))) == sorted(by_score)
    filtered = soup(client.get(f"/cases/{case_id}?q=A"))
    assert _texts(filtered) == ["star wars", "batman", "alien"]
    assert one(filtered, "#query-filter input[name=q]")["value"] == "A"
    assert _texts(soup(client.get(f"/cases/{case_id}?q=%25"))) == []  # % is literal


def test_a_big_case_is_paginated(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    add_queries(api, case_id, [f"query {n:03d}" for n in range(250)])
    login(client)
    first = soup(client.get(f"/cases/{case_id}"))
    assert len(first.select("#query-list li.query")) == 100
    links = first.select(".pagination a")
    assert [a.get_text() for a in links] == ["2", "3"]
    assert one(first, ".pagination .current").get_text() == "1"
    third = soup(client.get(str(links[-1]["href"])))
    assert len(third.select("#query-list li.query")) == 50
    assert _texts(third)[0] == "query 200"
    assert one(third, ".list-count .total").get_text() == "250"


def test_the_case_json_twin_agrees_with_the_page(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, _ids, _run = _scored_case(api, session_factory)
    login(client)
    response = client.get(f"/cases/{case_id}?sort=score")
    page = soup(response)
    twin = str(one(page, "link[rel=alternate][type='application/json']")["href"])
    assert "/api/v1/pages/cases/" in twin and "sort=score" in twin
    data = api.get(twin).json()
    assert template_context(response)["page"].model_dump(mode="json") == data
    assert data["score"]["case_score"] == float(str(one(page, "#case-score")["data-case-score"]))
    assert data["case"]["query_count"] == int(one(page, ".query-count").get_text())
    assert [q["text"] for q in data["queries"]["items"]] == _texts(page)
    assert data["score"]["unscored"] == int(one(page, ".unscored-count").get_text())


def test_another_users_case_is_a_404_page(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    theirs = movies_case(other_api)
    login(client)
    response = client.get(f"/cases/{theirs}")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert one(soup(response), "h1").get_text() == "Not found"
    assert client.get(f"/cases/{theirs}/queries/1").status_code == 404
    assert api.get(f"/api/v1/pages/cases/{theirs}").status_code == 404


def test_settings_save_makes_a_new_try_and_errors_come_back_as_422(
    api: ApiUser, client: TestClient
) -> None:
    case_id = movies_case(api)
    token = login(client)
    form = one(soup(client.get(f"/cases/{case_id}")), "#settings-form")
    knob = one(form, "input[name='knob.titleBoost']")
    assert knob["value"] == "10"
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {
        "query_template": one(form, "textarea[name=query_template]").get_text(),
        "search_endpoint_id": str(one(form, "select[name=search_endpoint_id] option")["value"]),
        "scorer_id": str(scorer_id(api, "NDCG@10")),
        "knob.titleBoost": "3",
    }
    saved = client.post(f"/cases/{case_id}/settings", data=values, follow_redirects=False)
    assert saved.status_code == 303
    case = api.get(f"/api/v1/cases/{case_id}").json()
    assert case["try_number"] == 2 and case["knobs"] == {"titleBoost": 3.0}
    assert case["scorer_id"] == scorer_id(api, "NDCG@10")
    bad = client.post(
        f"/cases/{case_id}/settings",
        data={**values, "csrf_token": token, "field_spec": "id:_id wat:title"},
    )
    assert bad.status_code == 422
    page = soup(bad)
    assert "wat" in one(page, ".field-error[data-field=field_spec]").get_text()
    assert one(page, "#settings-form input[name=field_spec]")["value"] == "id:_id wat:title"
    assert api.get(f"/api/v1/cases/{case_id}").json()["try_number"] == 2
    for knob_text in ("1e308", "-1"):
        refused = client.post(
            f"/cases/{case_id}/settings",
            data={**values, "csrf_token": token, "knob.titleBoost": knob_text},
        )
        assert refused.status_code == 422
        error = one(soup(refused), ".field-error[data-field=knobs]").get_text()
        assert "titleBoost" in error and "from 0 to 1,000,000,000" in error
    # The browser posts the textarea with CRLF line ends: the same template, no new try.
    template = values["query_template"].replace(", ", ",\n")
    for lines, try_number in ((template, 3), (template.replace("\n", "\r\n"), 3)):
        form_values = {**values, "csrf_token": token, "query_template": lines}
        resaved = client.post(
            f"/cases/{case_id}/settings", data=form_values, follow_redirects=False
        )
        assert resaved.status_code == 303
        assert api.get(f"/api/v1/cases/{case_id}").json()["try_number"] == try_number


def test_pasted_queries_are_added(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api)
    token = login(client)
    response = client.post(
        f"/cases/{case_id}/queries",
        data={"csrf_token": token, "queries": "star wars\n\n batman \nstar wars"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert _texts(soup(client.get(f"/cases/{case_id}"))) == ["star wars", "batman"]


def test_form_posts_without_csrf_are_refused(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api)
    login(client)
    response = client.post(f"/cases/{case_id}/queries", data={"queries": "sneaky"})
    assert response.status_code == 403
    assert response.headers["content-type"].startswith("text/html")
    assert api.get(f"/api/v1/cases/{case_id}/queries").json() == []


def test_script_in_query_text_and_doc_title_shows_as_text(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    evil = "<script>alert('q')</script>"
    ids = add_queries(api, case_id, [evil])
    finished_run(
        session_factory,
        case_id,
        {
            ids[evil]: {
                "status": "unscored",
                "text": evil,
                "docs": [
                    doc("<b>id</b>", "<script>alert('t')</script>", 1, poster="javascript:alert(1)")
                ],
            }
        },
        scorer=scorer_id(api, "Classic"),
    )
    login(client)
    for url in (f"/cases/{case_id}", f"/cases/{case_id}/queries/{ids[evil]}"):
        page = soup(client.get(url))
        assert all(script.get("src") for script in page.select("script")), url
        assert page.select("b") == []
    case_page = soup(client.get(f"/cases/{case_id}"))
    assert one(case_page, ".query-text").get_text() == evil
    results = soup(client.get(f"/cases/{case_id}/queries/{ids[evil]}/results"))
    assert results.select("script") == []
    assert one(results, ".doc-title").get_text() == "<script>alert('t')</script>"
    assert one(results, ".doc")["data-doc-id"] == "<b>id</b>"


@pytest.mark.runner
def test_run_button_starts_a_run_and_the_progress_partial_reports_the_end(
    api: ApiUser, client: TestClient, movies_engine: Any
) -> None:
    case_id = movies_case(api, movies_engine.index_url)
    add_queries(api, case_id, ["star wars", "batman"])
    token = login(client)
    started = client.post(
        f"/cases/{case_id}/runs", data={"csrf_token": token}, headers={"HX-Request": "true"}
    )
    assert started.status_code == 200
    progress = one(soup(started), "#run-progress")
    assert progress["hx-trigger"] == "every 500ms"
    poll = str(progress["hx-get"])
    for _ in range(200):
        response = client.get(poll, headers={"HX-Request": "true"})
        status = one(soup(response), "#run-progress")["data-status"]
        if status in ("finished", "failed"):
            break
        time.sleep(0.05)  # the run goes on in the app's event loop thread
    assert status == "finished"
    assert response.headers["hx-trigger"] == "run-finished"
    assert not one(soup(response), "#run-progress").has_attr("hx-trigger")
    page = soup(client.get(f"/cases/{case_id}"))
    assert one(page, ".num-found").get_text(strip=True).endswith("found")
    assert len(page.select("#runs tbody tr[data-run-id]")) == 1

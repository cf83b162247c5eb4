"""Switching a case's scorer re-scores its latest run at once, and the page says by which scorer."""

from __future__ import annotations

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
)

# Ranking d1 d2 d3 d4 with d1 and d3 relevant: AP@10 = (1/1 + 2/3) / 2.
AP_SCORE = 100 * (1 + 2 / 3) / 2


def _rated_case(api: ApiUser, factory: sessionmaker[Session]) -> tuple[int, int, int]:
    case_id = movies_case(api, scorer_id=scorer_id(api, "P@10"))
    qid = add_queries(api, case_id, ["star wars"])["star wars"]
    docs = [doc(str(n), f"Movie {n}", n) for n in range(1, 5)]
    run_id = finished_run(
        factory,
        case_id,
        {qid: {"score": 0.0, "docs": docs, "num_found": 4}},
        scorer=scorer_id(api, "P@10"),
        case_score=0.0,
    )
    ratings = [{"doc_id": "1", "rating": 1}, {"doc_id": "3", "rating": 1}]
    put = api.put(f"/api/v1/cases/{case_id}/queries/{qid}/ratings", json={"ratings": ratings})
    assert put.status_code == 200, put.text
    return case_id, qid, run_id


def test_patching_the_scorer_rescores_the_latest_run_without_the_engine(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, _qid, run_id = _rated_case(api, session_factory)
    before = api.get(f"/api/v1/pages/cases/{case_id}/score").json()
    assert before["scorer_name"] == "P@10"
    assert before["case_score"] != pytest.approx(AP_SCORE, abs=1e-6)
    ap = scorer_id(api, "AP@10")
    # The endpoint (port 9) does not answer: re-scoring must not need it.
    patched = api.patch(f"/api/v1/cases/{case_id}", json={"scorer_id": ap})
    assert patched.status_code == 200, patched.text
    score = api.get(f"/api/v1/pages/cases/{case_id}/score").json()
    assert score["run_id"] == run_id
    assert score["case_score"] == pytest.approx(AP_SCORE, abs=1e-6)
    assert (score["scorer_id"], score["scorer_name"]) == (ap, "AP@10")
    history = api.get(f"/api/v1/pages/cases/{case_id}/history").json()
    assert history["runs"][0]["scorer_id"] == ap
    assert history["scorer_names"][str(ap)] == "AP@10"
    # What the run scored when it finished stays as it was, with the scorer it used.
    p10 = scorer_id(api, "P@10")
    assert (score["recorded_score"], score["recorded_scorer_id"]) == (0.0, p10)
    assert score["recorded_scorer_name"] == "P@10"
    run = history["runs"][0]
    assert (run["recorded_score"], run["recorded_scorer_id"]) == (0.0, p10)
    assert [(p["run_id"], p["score"]) for p in history["points"]] == [(run_id, 0.0)]


def test_switching_the_scorer_in_the_settings_form_shows_only_new_scores(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, qid, _run = _rated_case(api, session_factory)
    login(client)
    form = one(soup(client.get(f"/cases/{case_id}")), "#settings-form")
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {
        "query_template": one(form, "textarea[name=query_template]").get_text(),
        "search_endpoint_id": str(one(form, "select[name=search_endpoint_id] option")["value"]),
        "scorer_id": str(scorer_id(api, "AP@10")),
    }
    saved = client.post(f"/cases/{case_id}/settings", data=values, follow_redirects=False)
    assert saved.status_code == 303
    page = soup(client.get(f"/cases/{case_id}"))
    assert one(page, ".scorer-name").get_text() == "AP@10"
    assert one(page, "#case-score .score-scorer").get_text() == "AP@10"
    assert one(page, "#case-score-value").get_text(strip=True) == f"{AP_SCORE:.0f}"
    assert one(page, f"#query-score-{qid}").get_text(strip=True) == f"{AP_SCORE:.0f}"
    # History keeps the run as it finished: P@10's 0, with today's AP@10 score on hover.
    row = one(page, "#runs tbody tr")
    assert one(row, ".run-scorer").get_text(strip=True) == "P@10"
    assert one(row, ".run-score").get_text(strip=True) == "0"
    assert one(row, ".run-score")["title"] == f"Re-scored today: {AP_SCORE:.0f} (AP@10)"
    assert one(page, "#case-score .recorded-value").get_text(strip=True) == "0"
    assert one(page, "#case-score .recorded-scorer").get_text(strip=True) == "P@10"


def test_saving_settings_with_the_same_scorer_keeps_the_run_as_it_is(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, _qid, _run = _rated_case(api, session_factory)
    before = api.get(f"/api/v1/pages/cases/{case_id}/score").json()
    assert api.patch(f"/api/v1/cases/{case_id}", json={"name": "Renamed"}).status_code == 200
    assert api.get(f"/api/v1/pages/cases/{case_id}/score").json() == before


def test_ratings_off_the_new_scale_are_shown_and_named(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # Rated 0-3 under NDCG, then the case moves to P@10 (0-1): the 3 is off its scale.
    case_id = movies_case(api, scorer_id=scorer_id(api, "NDCG@10"))
    qid = add_queries(api, case_id, ["star wars"])["star wars"]
    docs = [doc(str(n), f"Movie {n}", n) for n in range(1, 4)]
    finished_run(
        session_factory,
        case_id,
        {qid: {"score": 0.0, "docs": docs, "num_found": 3}},
        scorer=scorer_id(api, "NDCG@10"),
        case_score=0.0,
    )
    ratings = [{"doc_id": "1", "rating": 3}, {"doc_id": "2", "rating": 1}]
    put = api.put(f"/api/v1/cases/{case_id}/queries/{qid}/ratings", json={"ratings": ratings})
    assert put.status_code == 200, put.text
    patched = api.patch(f"/api/v1/cases/{case_id}", json={"scorer_id": scorer_id(api, "P@10")})
    assert patched.status_code == 200, patched.text
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{qid}"))
    note = one(page, f"#off-scale-{qid}").get_text(" ", strip=True)
    assert note.startswith("1 rating outside the scorer's scale: 1.")
    first, second, third = page.select(".doc")
    assert "rated 3, off the scorer's scale" in one(first, ".off-scale-mark").get_text()
    assert not second.select(".off-scale-mark") and not second.select(".unrated-mark")
    assert one(third, ".unrated-mark").get_text() == "unrated"
    # The clear button is in every row, hidden where there is nothing to clear.
    assert "idle" not in one(first, "button.clear")["class"]
    assert "idle" in one(third, "button.clear")["class"] and third.select("button.clear[disabled]")

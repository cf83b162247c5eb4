"""The compare page: case scores, counts, per-query deltas and top changes; the case page form."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.scorers.config import build_config
from app.scoring import QueryInput, ScoreDoc, score_query
from tests.fixtures.users import ApiUser
from tests.support.compare_pages import XSS as XSS
from tests.support.compare_pages import _two_runs as _two_runs
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


def _ndcg(api: ApiUser, docs: list[str], ratings: dict[str, float]) -> float | None:
    preset = next(s for s in api.get("/api/v1/scorers").json() if s["name"] == "NDCG@10")
    config = build_config(
        kind=preset["kind"],
        params=preset["params"],
        scale=preset["scale"],
        scale_labels=None,
        code=None,
        max_score=None,
    )
    query = QueryInput(docs=[ScoreDoc(id=d) for d in docs], ratings=ratings)
    return score_query(config, query).score


def test_compare_page_shows_scores_counts_and_deltas(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    case_id, ids = setup["case_id"], setup["ids"]
    login(client)
    response = client.get(
        f"/cases/{case_id}/compare", params={"base": setup["base"], "other": setup["other"]}
    )
    assert response.status_code == 200
    page = soup(response)

    wars_before = _ndcg(api, ["1", "2"], {"1": 3, "2": 1})
    wars_after = _ndcg(api, ["2", "9"], {"1": 3, "2": 1})
    bat_before = _ndcg(api, ["4"], {"5": 3, "4": 1})
    bat_after = _ndcg(api, ["5", "4"], {"5": 3, "4": 1})
    jaws = _ndcg(api, ["7"], {"7": 3, "8": 3})
    assert None not in (wars_before, wars_after, bat_before, bat_after, jaws)
    base_mean = (wars_before + bat_before + 100.0) / 3  # type: ignore[operator]
    other_mean = (wars_after + bat_after + jaws) / 3  # type: ignore[operator]
    assert other_mean < base_mean
    assert float(str(one(page, "#base-case-score")["data-score"])) == base_mean
    assert float(str(one(page, "#other-case-score")["data-score"])) == other_mean
    # One headline: the paired mean over star wars and batman (scored in both). Star wars
    # lost what batman gained, so it is 0, although the case scores (over different queries)
    # fell.
    paired = (wars_after - wars_before + bat_after - bat_before) / 2  # type: ignore[operator]
    assert paired == pytest.approx(0, abs=1e-9) and other_mean - base_mean < -1
    headline = one(page, "#headline-delta")
    assert "delta-unchanged" in headline["class"]
    # A sum of changes that cancel out is 0, never "-0.0".
    assert headline.get_text(strip=True) == "0.0"
    assert float(str(headline["data-delta"])) == 0.0
    assert one(page, "#stats-summary").get_text().startswith("+0.0 points")
    assert "over the 2 queries scored in both" in one(page, "#compare-headline").get_text()
    note = one(page, "#sets-differ").get_text()
    assert "base 3, other 3; 1 query only in base; 1 query only in other" in note
    assert f"their difference, {other_mean - base_mean:+.1f}," in note
    assert note.endswith("Over the 2 queries scored in both, other is +0.0.")
    assert page.select("#case-score-delta") == []

    counts = {
        li["class"][0]: int(one(li, ".n").get_text()) for li in page.select("#compare-counts li")
    }
    assert counts == {
        "count-improved": 1,
        "count-worsened": 1,
        "count-unchanged": 0,
        "count-incomparable": 0,
        "count-only-in-one": 2,
    }

    rows = page.select("#compare-queries tbody tr")
    assert [r["data-query-id"] for r in rows[:2]] == [str(ids["star wars"]), str(ids["batman"])]
    wars = one(page, f"#compare-query-{ids['star wars']}")
    assert wars["data-change"] == "worsened"
    wars_delta = one(wars, ".delta")
    assert "delta-worsened" in wars_delta["class"]
    assert float(str(wars_delta["data-delta"])) == wars_after - wars_before  # type: ignore[operator]
    assert one(wars, ".base-score .badge").get_text() == str(round(wars_before))  # type: ignore[arg-type]
    assert [li["data-doc-id"] for li in wars.select(".moved.entered li")] == ["9"]
    assert [li["data-doc-id"] for li in wars.select(".moved.left li")] == ["1"]
    assert one(wars, ".moved.left .doc-title").get_text() == "A New Hope"
    assert one(wars, ".moved.left .doc-rating").get_text(strip=True) == "rated 3"

    batman = one(page, f"#compare-query-{ids['batman']}")
    assert "delta-improved" in one(batman, ".delta")["class"]
    assert one(batman, ".moved.entered .doc-title").get_text() == XSS  # shown as text
    assert page.select("#compare-queries script") == []
    assert one(page, f"#compare-query-{ids['alien']} .other-missing")
    assert one(page, f"#compare-query-{ids['jaws']} .base-missing")
    assert one(page, f"#compare-query-{ids['jaws']}")["data-change"] == "only_other"


def test_the_compare_json_twin_agrees_with_the_page(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    login(client)
    response = client.get(
        f"/cases/{setup['case_id']}/compare",
        params={"base": setup["base"], "other": setup["other"], "sort": "text"},
    )
    page = soup(response)
    twin = str(one(page, "link[rel=alternate][type='application/json']")["href"])
    assert f"/api/v1/cases/{setup['case_id']}/runs/compare" in twin
    data = api.get(twin).json()
    assert template_context(response)["page"].model_dump(mode="json") == data
    assert (data["base"]["run_id"], data["other"]["run_id"], data["sort"]) == (
        setup["base"],
        setup["other"],
        "text",
    )
    texts = [a.get_text() for a in page.select("#compare-queries .query-text a")]
    assert texts == [q["text"] for q in data["queries"]] == sorted(texts)
    assert float(str(one(page, "#headline-delta")["data-delta"])) == data["headline_delta"]
    assert data["headline_delta"] == data["stats"]["mean_delta"]
    assert one(page, "#compare-sort option[selected]")["value"] == "text"


def test_a_run_against_the_current_ratings_page(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    login(client)
    page = soup(
        client.get(
            f"/cases/{setup['case_id']}/compare", params={"base": setup["base"], "other": ""}
        )
    )
    assert "stored scores" in one(page, "#compare-base .side-label").get_text()
    assert "current ratings" in one(page, "#compare-other .side-label").get_text()
    assert one(page, "#compare-base")["data-run-id"] == one(page, "#compare-other")["data-run-id"]
    assert one(page, "#compare-sort input[name=other]")["value"] == ""
    twin = str(one(page, "link[rel=alternate][type='application/json']")["href"])
    assert "other=" not in twin
    assert page.select("#compare-swap") == []


def test_the_case_page_form_defaults_to_the_two_newest_finished_runs(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}"))
    form = one(page, "form#compare-form")
    assert form["method"] == "get"
    assert one(form, "select[name=base] option[selected]")["value"] == str(setup["base"])
    assert one(form, "select[name=other] option[selected]")["value"] == str(setup["other"])
    values = [o["value"] for o in form.select("select[name=other] option")]
    assert values == ["", str(setup["other"]), str(setup["base"])]
    chosen = {"base": setup["base"], "other": setup["other"]}
    followed = client.get(str(form["action"]), params=chosen)
    assert followed.status_code == 200
    assert one(soup(followed), "#compare-other")["data-run-id"] == str(setup["other"])


def test_the_case_page_form_with_one_run_compares_with_current_ratings(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    login(client)
    assert one(soup(client.get(f"/cases/{case_id}")), "#compare-runs").select("form") == []
    ids = add_queries(api, case_id, ["batman"])
    outcomes = {ids["batman"]: {"docs": [doc("4", "Batman", 1)], "status": "unscored"}}
    run_id = finished_run(session_factory, case_id, outcomes, scorer=scorer_id(api, "Classic"))
    form = one(soup(client.get(f"/cases/{case_id}")), "form#compare-form")
    assert one(form, "select[name=base] option[selected]")["value"] == str(run_id)
    assert one(form, "select[name=other] option[selected]")["value"] == ""


def test_compare_page_errors(
    api: ApiUser, other_api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    path = f"/cases/{setup['case_id']}/compare"
    login(client)
    assert client.get(path, params={"base": 999999}).status_code == 404
    assert client.get(path, params={"base": setup["base"], "other": "x"}).status_code == 404
    missing = client.get(path)
    assert missing.status_code == 400
    assert one(soup(missing), ".error-message").get_text() == "Choose the base run to compare."
    other_case = movies_case(api)
    foreign = client.get(f"/cases/{other_case}/compare", params={"base": setup["base"]})
    assert foreign.status_code == 404
    client.cookies.clear()
    login(client, other_api.email)
    assert client.get(path, params={"base": setup["base"]}).status_code == 404


def test_the_history_partial_brings_the_compare_form_up_to_date(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # After a run finishes the page re-fetches the history partial; the form comes with it.
    setup = _two_runs(api, session_factory)
    login(client)
    partial = soup(client.get(f"/cases/{setup['case_id']}/history"))
    form = one(partial, "#history form#compare-form")
    assert one(form, "select[name=other] option[selected]")["value"] == str(setup["other"])

"""The explain tree under a result, and the unrated report's links from and to the case page."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    attr,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
)

EXPLAIN = {
    "value": 12.3,
    "description": "sum of:",
    "details": [
        {"value": 4.2, "description": "weight(overview:wars in 3)", "details": []},
        {"value": 8.1, "description": "weight(title:star in 3)", "details": []},
    ],
}


def _case(api: ApiUser, factory: sessionmaker[Session]) -> tuple[int, dict[str, int]]:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "batman"])
    star = [doc(str(n), f"Star {n}", n) for n in range(1, 4)]
    star[0]["explain"] = EXPLAIN
    star[1]["explain"] = "4.2 = weight(title:star in 3)\n  4.2 = score(freq=1.0)"
    finished_run(
        factory,
        case_id,
        {
            ids["star wars"]: {"status": "unscored", "docs": star},
            ids["batman"]: {"status": "unscored", "docs": [doc("9", "Bat", 1)]},
        },
        scorer=scorer_id(api, "Classic"),
    )
    return case_id, ids


def test_explain_shows_the_tree_and_keeps_the_raw_json_behind_a_toggle(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids = _case(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{ids['star wars']}/results"))
    first, second = page.select("li.doc")[:2]
    explain = one(first, "details.explain")
    assert one(explain, "summary").get_text() == "Why this score"
    lines = [
        (
            attr(li, "data-depth"),
            one(li, ".explain-value").get_text(),
            one(li, ".explain-description").get_text(),
        )
        for li in explain.select(".explain-tree li")
    ]
    assert lines == [
        ("0", "12.3", "sum of:"),
        ("1", "8.1", "weight(title:star in 3)"),
        ("1", "4.2", "weight(overview:wars in 3)"),
    ]
    assert '"description": "sum of:"' in one(explain, "details.explain-raw pre").get_text()
    text = one(second, "pre.explain-text").get_text()
    assert text == "4.2 = weight(title:star in 3)\n  4.2 = score(freq=1.0)"
    assert page.select("li.doc")[2].select("details.explain") == []


def test_first_unrated_doc_carries_the_anchor(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids = _case(api, session_factory)
    query_id = ids["star wars"]
    api.put(
        f"/api/v1/cases/{case_id}/queries/{query_id}/ratings",
        json={"ratings": [{"doc_id": "1", "rating": 5}]},
    )
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{query_id}"))
    anchored = page.select(f"#first-unrated-{query_id}")
    assert [attr(li, "data-doc-id") for li in anchored] == ["2"]


def test_unrated_report_links_from_the_case_page_and_to_each_first_unrated_doc(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids = _case(api, session_factory)
    api.put(
        f"/api/v1/cases/{case_id}/queries/{ids['batman']}/ratings",
        json={"ratings": [{"doc_id": "9", "rating": 5}]},
    )
    login(client)
    case_page = soup(client.get(f"/cases/{case_id}"))
    report = attr(one(case_page, "#unrated-report-link"), "href")
    assert report.endswith(f"/cases/{case_id}/coverage")
    coverage = soup(client.get(report))
    rows = {attr(tr, "data-query-id"): tr for tr in coverage.select("#coverage-queries tbody tr")}
    star = rows[str(ids["star wars"])]
    link = attr(one(star, "a.rate-unrated"), "href")
    assert link.endswith(
        f"/cases/{case_id}/queries/{ids['star wars']}#first-unrated-{ids['star wars']}"
    )
    # Every doc of "batman" is rated: nothing to link to.
    assert rows[str(ids["batman"])].select("a.rate-unrated") == []

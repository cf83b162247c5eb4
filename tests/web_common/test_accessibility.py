"""Small things every page gets right: skip link, favicon, live regions, labelled controls,
the JSON twin declared once (head link and `Link` header), and no silently empty names."""

from __future__ import annotations

import jinja2
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.web_common.templating import templates
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


def _case_with_run(api: ApiUser, factory: sessionmaker[Session]) -> tuple[int, int, int]:
    case_id = movies_case(api)
    qid = add_queries(api, case_id, ["star wars"])["star wars"]
    docs = [doc("11", "A New Hope", 1), doc("12", "Empire", 2)]
    run_id = finished_run(
        factory,
        case_id,
        {qid: {"score": 40.0, "docs": docs}},
        scorer=scorer_id(api, "Classic"),
        case_score=40.0,
    )
    put = api.put(
        f"/api/v1/cases/{case_id}/queries/{qid}/ratings",
        json={"ratings": [{"doc_id": "12", "rating": 7}]},
    )
    assert put.status_code == 200, put.text
    return case_id, qid, run_id


def test_every_page_has_a_skip_link_to_main_and_the_favicon(
    api: ApiUser, client: TestClient
) -> None:
    login(client)
    for path in ("/", "/scorers", "/endpoints", "/account", "/login"):
        page = soup(client.get(path))
        skip = one(page, "body > a.skip-link")
        assert attr(skip, "href") == "#main"
        assert one(page, "main")["id"] == "main"
        icon = one(page, "link[rel=icon]")
        assert attr(icon, "type") == "image/svg+xml"
    served = client.get(attr(icon, "href"))
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("image/svg+xml")
    assert served.text.lstrip().startswith("<svg")


def test_the_json_twin_is_in_the_head_and_the_link_header_alike(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, qid, _run = _case_with_run(api, session_factory)
    login(client)
    pages = {
        "/": "/api/v1/pages/cases",
        "/scorers": "/api/v1/pages/scorers",
        f"/cases/{case_id}": f"/api/v1/pages/cases/{case_id}?sort=position&q=&page=1",
        f"/cases/{case_id}/queries/{qid}": f"/api/v1/pages/cases/{case_id}/queries/{qid}",
    }
    for path, twin in pages.items():
        response = client.get(path)
        assert response.status_code == 200, path
        href = attr(
            one(soup(response), 'head link[rel=alternate][type="application/json"]'), "href"
        )
        assert href.removeprefix("http://testserver") == twin, path
        assert response.headers["link"] == f'<{href}>; rel="alternate"; type="application/json"'
        # The twin answers, so the header points somewhere real.
        assert client.get(href).status_code == 200, href
    # A fragment has no head, so no twin.
    partial = client.get(f"/cases/{case_id}/score")
    assert "link" not in partial.headers


def test_scores_progress_and_results_speak_to_screen_readers(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, qid, run_id = _case_with_run(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    score = one(page, "#case-score")
    assert (score["aria-live"], score["aria-atomic"]) == ("polite", "true")
    progress = soup(client.get(f"/cases/{case_id}/runs/{run_id}/progress"))
    assert one(progress, "progress")["aria-label"] == f"Run {run_id} progress"
    status = one(progress, ".run-status")
    assert (status["role"], status["aria-live"]) == ("status", "polite")
    results = soup(client.get(f"/cases/{case_id}/queries/{qid}/results"))
    rows = results.select("li.doc")
    assert [(r["tabindex"], r["role"], r["aria-label"]) for r in rows] == [
        ("0", "group", "Result 1: A New Hope, unrated"),
        ("0", "group", "Result 2: Empire, rated 7"),
    ]


def test_a_name_no_handler_passed_is_an_error_not_an_empty_string() -> None:
    template = templates.env.from_string("Hello {{ nobody_passed_this }}")
    with pytest.raises(jinja2.UndefinedError):
        template.render()
    # Optional names say so where they are used.
    assert templates.env.from_string("{{ x | default('none') }}").render() == "none"

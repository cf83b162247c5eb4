"""Rating a doc from the page: plain form post and htmx, both through the API's services."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from pydantic import TypeAdapter
from sqlalchemy.orm import Session, sessionmaker

from app.accounts.schemas import ApiKeyRead
from app.web_common.templating import NO_VALUE
from tests.fixtures.users import ApiUser
from tests.support.pages import (
    login,
    one,
    scorer_id,
    soup,
    template_context,
)
from tests.support.rating import _case_with_results as _case_with_results


def _ratings(api: ApiUser, case_id: int, query_id: int) -> dict[str, float]:
    body = api.get(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings").json()
    return {r["doc_id"]: r["rating"] for r in body["ratings"]}


def test_results_show_fields_images_and_scale_buttons(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case_with_results(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{query_id}"))
    first = page.select(".doc")[0]
    assert one(first, ".doc-title").get_text() == "Movie 1"
    assert one(first, ".doc-fields dd").get_text() == "Lucas"
    buttons = first.select("form.rate button[name=rating]:not(.clear)")
    assert [b.get_text() for b in buttons] == [str(n) for n in range(1, 11)]  # Classic: 1-10
    assert [b["data-digit"] for b in buttons][-1] == "0"  # 0 gives 10
    assert one(first, "form.rate input[name=csrf_token]")
    hues = [int(str(b["style"]).split(":")[1]) for b in buttons]
    assert hues == sorted(hues) and hues[0] == 0 and hues[-1] == 120
    help_line = one(soup(client.get(f"/cases/{case_id}")), "#keyboard-help").get_text()
    assert "0 gives 10" in help_line
    twin = api.get(str(one(page, "link[rel=alternate]")["href"])).json()
    assert [d["title"] for d in twin["docs"]] == ["Movie 1", "Movie 2", "Movie 3"]


def test_rating_by_plain_form_post_stores_it_and_moves_the_badge(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case_with_results(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{query_id}"))
    assert one(page, f"#query-score-{query_id}").get_text(strip=True) == NO_VALUE
    form = page.select(".doc form.rate")[0]
    fields = {str(i["name"]): str(i["value"]) for i in form.select("input[type=hidden]")}
    response = client.post(
        str(form["action"]), data={**fields, "rating": "10"}, follow_redirects=False
    )
    assert response.status_code == 303
    assert response.headers["location"].endswith(f"/queries/{query_id}#results-{query_id}")
    assert _ratings(api, case_id, query_id) == {"1": 10.0}
    after = soup(client.get(f"/cases/{case_id}/queries/{query_id}"))
    assert one(after, f"#query-score-{query_id}").get_text(strip=True) == "100"
    assert one(after, "#case-score-value").get_text(strip=True) == "100"
    chosen = one(after.select(".doc")[0], "button.rating.selected")
    assert chosen.get_text() == "10" and chosen["aria-pressed"] == "true"
    list_row = one(soup(client.get(f"/cases/{case_id}")), f"#query-{query_id}")
    assert one(list_row, ".badge").get_text(strip=True) == "100"
    assert one(list_row, ".unrated").get_text(strip=True) == "2 unrated"


def test_rating_with_htmx_returns_results_and_out_of_band_scores(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case_with_results(api, session_factory)
    token = login(client)
    url = f"/cases/{case_id}/queries/{query_id}/ratings"
    headers = {"HX-Request": "true", "X-CSRF-Token": token}
    response = client.post(url, data={"doc_id": "2", "rating": "5"}, headers=headers)
    assert response.status_code == 200
    fragment = soup(response)
    assert one(fragment, ".results-body")["data-query-id"] == str(query_id)
    badge = one(fragment, f"#query-score-{query_id}[hx-swap-oob=true]")
    case_score = one(fragment, "#case-score[hx-swap-oob=true]")
    assert badge.get_text(strip=True) == one(case_score, ".badge").get_text(strip=True)
    assert badge.get_text(strip=True) not in ("", NO_VALUE)
    assert (
        one(fragment, f"#query-unrated-{query_id}[hx-swap-oob=true]").get_text(strip=True)
        == "2 unrated"
    )
    cleared = client.post(url, data={"doc_id": "2", "rating": ""}, headers=headers)
    assert cleared.status_code == 200
    assert _ratings(api, case_id, query_id) == {}


def test_rating_outside_the_scale_or_without_csrf_is_refused(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case_with_results(api, session_factory)
    token = login(client)
    url = f"/cases/{case_id}/queries/{query_id}/ratings"
    missing = client.post(url, data={"doc_id": "1", "rating": "3"})
    assert missing.status_code == 403
    outside = client.post(url, data={"csrf_token": token, "doc_id": "1", "rating": "11"})
    assert outside.status_code == 422
    assert "outside" in one(soup(outside), ".error-message").get_text()
    junk = client.post(url, data={"csrf_token": token, "doc_id": "1", "rating": "nan"})
    assert junk.status_code == 422
    assert _ratings(api, case_id, query_id) == {}


def test_every_page_shows_exactly_its_json_twin(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case_with_results(api, session_factory)
    endpoint_id = api.get("/api/v1/search-endpoints").json()[0]["id"]
    login(client)
    # Each page and the name its template gets the page data under.
    pages = [
        ("/", "page"),
        (f"/cases/{case_id}", "page"),
        (f"/cases/{case_id}/queries/{query_id}", "results"),
        ("/scorers", "page"),
        ("/scorers/new", "page"),
        (f"/scorers/{scorer_id(api, 'Classic')}", "page"),
        ("/endpoints", "page"),
        (f"/endpoints/{endpoint_id}", "endpoint"),
        ("/account", "keys"),
    ]
    for url, name in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        link = one(soup(response), "link[rel=alternate][type='application/json']")
        twin = api.get(str(link["href"]))
        assert twin.status_code == 200, (url, link["href"])
        assert twin.headers["content-type"] == "application/json"
        # The whole model the template rendered, not a few of its fields.
        shown = template_context(response)[name]
        if name == "keys":
            shown = [ApiKeyRead.model_validate(key) for key in shown]
        assert TypeAdapter(Any).dump_python(shown, mode="json") == twin.json(), url

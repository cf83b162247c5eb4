"""Click log pages: the list and a log's summary agree with their JSON twins."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.clicks import make_log, send_events, ubi_event
from tests.support.pages import attr, login, one, soup


def test_summary_page_counts_actions_and_ctr_by_rank(api: ApiUser, client: TestClient) -> None:
    log = make_log(api, name="<b>shop</b>")
    events = [
        ubi_event(f"s{i}", "shoes", d, r, "impression")
        for i in range(4)
        for d, r in (("A", 1), ("B", 2))
    ]
    events += [ubi_event("s0", "shoes", "A", 1, "click"), ubi_event("s1", "shoes", "A", 1, "click")]
    events += [
        ubi_event("s2", "shoes", "B", 2, "click"),
        ubi_event("s2", "shoes", "B", 2, "purchase"),
    ]
    send_events(api, log["id"], events)
    login(client)
    listing = soup(client.get("/click-logs"))
    assert (
        one(listing, f"tr[data-click-log-id='{log['id']}'] .click-log-name").get_text()
        == "<b>shop</b>"
    )
    page = soup(client.get(f"/click-logs/{log['id']}"))
    twin = client.get(str(one(page, "link[rel=alternate]")["href"])).json()
    summary = twin["summary"]
    assert one(page, "#event-count").get_text() == str(summary["events"]) == "12"
    actions = {
        tr["data-action"]: int(one(tr, ".count").get_text())
        for tr in page.select("#by-action tbody tr")
    }
    assert actions == summary["by_action"] == {"click": 3, "impression": 8, "purchase": 1}
    # Rank 1: 2 clicks of 4 impressions; rank 2: 1 of 4.
    assert [(r["rank"], r["ctr"]) for r in summary["ctr_by_rank"]] == [(1, 0.5), (2, 0.25)]
    assert [one(tr, ".ctr").get_text() for tr in page.select("#ctr-by-rank tbody tr")] == [
        "50.0%",
        "25.0%",
    ]
    bars = page.select("#ctr-chart .ctr-bar")
    assert [float(attr(b, "height")) for b in bars] == [120.0, 60.0]
    assert one(page, "#click-log-name").get_text() == "<b>shop</b>"


def test_another_users_log_page_is_404(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    log = make_log(other_api)
    login(client)
    assert client.get(f"/click-logs/{log['id']}").status_code == 404
    assert api.get(f"/api/v1/pages/click-logs/{log['id']}").status_code == 404

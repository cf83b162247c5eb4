"""The case's schedule, alerts and notes card, and the next run on the cases list."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.schedules.evaluate import evaluate_run
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case
from tests.support.pages import attr, login, one, soup


def test_the_card_sets_a_schedule_an_alert_and_a_note(
    api: ApiUser, client: TestClient, db: Session
) -> None:
    case_id, queries = new_case(api, queries=1)
    hook = api.post("/api/v1/webhooks", json={"name": "ops", "url": "https://h.example.com/a"})
    token = login(client, api.email)
    page = soup(client.get(f"/cases/{case_id}"))
    assert attr(one(page, "#watch"), "hx-get").endswith(f"/cases/{case_id}/watch")
    base = f"/cases/{case_id}"
    bad = client.post(f"{base}/schedule", data={"csrf_token": token, "cron": "nightly"})
    assert bad.status_code == 422
    assert "not a schedule" in one(soup(bad), "#watch-error").get_text()
    assert client.post(f"{base}/schedule", data={"cron": "@daily"}).status_code == 403
    saved = client.post(
        f"{base}/schedule", data={"csrf_token": token, "cron": "30 4 * * *"}, follow_redirects=False
    )
    assert saved.status_code == 303
    card = soup(client.get(f"{base}/watch", headers={"HX-Request": "true"}))
    assert "30 4 * * *" in one(card, "#schedule-state").get_text()
    assert one(card, "#schedule-state time.next-run").get_text().endswith("04:30 UTC")
    form = {
        "csrf_token": token,
        "kind": "below",
        "threshold": "90",
        "webhook_ids": str(hook.json()["id"]),
        "email": "a@example.com, b@example.com",
    }
    assert (
        client.post(f"{base}/alerts", data=form, headers={"HX-Request": "true"}).status_code == 200
    )
    wrong = client.post(f"{base}/alerts", data={**form, "threshold": "ninety"})
    assert wrong.status_code == 422 and "must be a number" in wrong.text
    (alert,) = api.get(f"/api/v1/cases/{case_id}/alerts").json()
    assert (alert["threshold"], alert["email"]) == (90.0, ["a@example.com", "b@example.com"])
    run = add_run(db, case_id, queries, [40])
    evaluate_run(session=db, run_id=run.id, base_url="http://x", email_enabled=False)
    client.post(
        f"{base}/annotations",
        data={"csrf_token": token, "text": "reindexed", "run_id": str(run.id)},
    )
    page = soup(client.get(f"{base}/watch"))
    (event,) = page.select("#alert-events tbody tr")
    assert "score 40.00 is below 90" in event.get_text()
    deliveries = [d.get_text(" ", strip=True) for d in event.select(".delivery")]
    assert deliveries[0].startswith("ops: pending")  # the webhook by its name
    assert [d.split(":")[0] for d in deliveries[1:]] == ["a@example.com", "b@example.com"]
    assert "reindexed" in one(page, "#notes").get_text()
    assert attr(one(page, 'link[rel="alternate"]'), "href").endswith(
        f"/api/v1/cases/{case_id}/watch"
    )
    twin = api.get(f"/api/v1/cases/{case_id}/watch").json()
    assert twin["schedule"]["cron"] == "30 4 * * *" and len(twin["events"]) == 1
    client.post(f"{base}/alerts/{alert['id']}/delete", data={"csrf_token": token})
    assert api.get(f"/api/v1/cases/{case_id}/alerts").json() == []
    client.post(f"{base}/schedule", data={"csrf_token": token, "cron": ""})
    assert api.get(f"/api/v1/cases/{case_id}/schedule").status_code == 404


def test_the_cases_list_shows_the_next_run(api: ApiUser, client: TestClient) -> None:
    scheduled, _ = new_case(api, name="Nightly")
    new_case(api, name="Manual")
    api.put(f"/api/v1/cases/{scheduled}/schedule", json={"cron": "15 2 * * *"})
    login(client, api.email)
    rows = {
        one(tr, ".case-name a").get_text(): one(tr, ".next-run").get_text()
        for tr in soup(client.get("/")).select("#cases tbody tr")
    }
    assert rows["Nightly"].endswith("02:15") and rows["Manual"] == ""


def test_another_users_card_is_not_found(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    case_id, _ = new_case(api)
    token = login(client, other_api.email)
    assert client.get(f"/cases/{case_id}/watch").status_code == 404
    posted = client.post(f"/cases/{case_id}/schedule", data={"csrf_token": token, "cron": "@daily"})
    assert posted.status_code == 404

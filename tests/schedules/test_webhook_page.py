"""The webhooks page (list, add, share, delete), and the alert rules naming what they are."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.models import Webhook
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import new_case
from tests.support.pages import attr, login, one, soup

SECRET = "page-secret-never-shown"


def test_a_webhook_is_added_listed_and_deleted_in_the_page(
    api: ApiUser, client: TestClient, db: Session
) -> None:
    case_id, _ = new_case(api)
    token = login(client, api.email)
    account = soup(client.get("/account"))
    assert attr(one(account, "#account-webhooks a"), "href").endswith("/webhooks")
    page = soup(client.get(f"/webhooks?case_id={case_id}"))
    assert one(page, "#no-webhooks").get_text() == "No webhooks yet."
    assert attr(one(page, "#back-to-alerts"), "href").endswith(f"/cases/{case_id}/watch")
    twin = one(page, 'head link[rel=alternate][type="application/json"]')
    assert attr(twin, "href").endswith("/api/v1/webhooks")
    assert one(page, "nav.mainnav")  # the page keeps its navigation
    form = {
        "csrf_token": token,
        "case_id": str(case_id),
        "name": "search-team Slack",
        "url": "https://hooks.example.com/T1",
        "secret": SECRET,
    }
    assert client.post("/webhooks", data={**form, "csrf_token": "x"}).status_code == 403
    bad = client.post("/webhooks", data={**form, "url": "ftp://hooks.example.com/T1"})
    assert bad.status_code == 422
    page = soup(bad)
    assert "http:// or https://" in one(page, "#webhook-error").get_text()
    assert attr(one(page, "#webhook-form input[name=name]"), "value") == "search-team Slack"
    assert attr(one(page, "#webhook-form input[name=url]"), "value") == "ftp://hooks.example.com/T1"
    assert SECRET not in bad.text
    added = client.post("/webhooks", data=form, follow_redirects=False)
    assert added.status_code == 303
    assert added.headers["location"].endswith(f"/webhooks?case_id={case_id}")
    listed = client.get(added.headers["location"])
    assert SECRET not in listed.text
    (row,) = soup(listed).select("#webhook-list tbody tr")
    assert one(row, ".webhook-name").get_text() == "search-team Slack"
    assert one(row, ".webhook-url").get_text() == "https://hooks.example.com/T1"
    stored = db.get(Webhook, int(attr(row, "data-webhook-id")))
    assert stored is not None and stored.secret is not None and SECRET not in stored.secret
    assert api.get("/api/v1/webhooks").json()[0]["has_secret"] is True
    # The alert form offers it now, and the rule names it.
    card = soup(client.get(f"/cases/{case_id}/watch"))
    assert card.select("#no-webhook") == []
    box = one(card, "#alert-webhooks input[name=webhook_ids]")
    assert attr(box, "value") == str(stored.id)
    client.post(
        f"/cases/{case_id}/alerts",
        data={"csrf_token": token, "kind": "below", "threshold": "50", "webhook_ids": stored.id},
    )
    card = soup(client.get(f"/cases/{case_id}/watch"))
    (rule,) = card.select("#alert-rules li")
    assert one(rule, ".alert-kind").get_text() == "Below a threshold"
    assert one(rule, ".alert-targets").get_text() == "search-team Slack"
    assert "webhook(s)" not in rule.get_text()
    remove = one(rule, "form button")
    assert remove.get_text() == "Remove" and "remove" in (remove.get("class") or [])
    assert "link" not in (remove.get("class") or [])
    deleted = client.post(
        f"/webhooks/{stored.id}/delete",
        data={"csrf_token": token, "case_id": str(case_id)},
        follow_redirects=False,
    )
    assert deleted.status_code == 303
    assert api.get("/api/v1/webhooks").json() == []
    assert client.post("/webhooks/999/delete", data={"csrf_token": token}).status_code == 404


def test_the_alert_form_links_to_the_webhooks_page_when_there_are_none(
    api: ApiUser, client: TestClient
) -> None:
    case_id, _ = new_case(api)
    login(client, api.email)
    card = soup(client.get(f"/cases/{case_id}/watch", headers={"HX-Request": "true"}))
    link = one(card, "#no-webhook a")
    assert attr(link, "href").endswith(f"/webhooks?case_id={case_id}")
    assert card.select("#alert-webhooks input[name=webhook_ids]") == []


def test_a_webhook_shared_with_a_team_is_listed_for_its_members_without_delete(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    team = api.post("/api/v1/teams", json={"name": "Search"}).json()
    api.put(f"/api/v1/teams/{team['id']}/members", json={"email": other_api.email})
    token = login(client, api.email)
    page = soup(client.get("/webhooks"))
    box = one(page, "#webhook-form input[name=team_ids]")
    assert attr(box, "value") == str(team["id"])
    form = {
        "csrf_token": token,
        "name": "ops",
        "url": "https://hooks.example.com/ops",
        "team_ids": str(team["id"]),
    }
    assert client.post("/webhooks", data=form, follow_redirects=False).status_code == 303
    (hook,) = api.get("/api/v1/webhooks").json()
    assert hook["team_ids"] == [team["id"]] and hook["has_secret"] is False
    assert one(soup(client.get("/webhooks")), ".webhook-teams").get_text() == "Search"
    member_token = login(client, other_api.email)
    (row,) = soup(client.get("/webhooks")).select("#webhook-list tbody tr")
    assert row.select("form") == [] and "shared by a team" in row.get_text()
    refused = client.post(f"/webhooks/{hook['id']}/delete", data={"csrf_token": member_token})
    assert refused.status_code == 403
    assert "Only the owner" in one(soup(refused), "#webhook-error").get_text()
    assert len(api.get("/api/v1/webhooks").json()) == 1

"""What a rule cannot do is said when it is made and on the rule: a significant_drop needs a
least number of changed queries, an e-mail needs an SMTP server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.schedules import delivery
from app.schedules.alerts import min_changed_queries
from app.schedules.delivery import DeliveryConfig
from app.scoring.significance import FLIPS, SEED, randomization_p
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import new_case
from tests.support.pages import login, one, soup


@pytest.mark.parametrize(
    ("alpha", "least"),
    [(0.05, 6), (0.01, 8), (0.1, 5), (0.0625, 6), (0.5, 3), (0.9, 2), (0.00005, None)],
)
def test_the_least_number_of_changed_queries_follows_alpha(alpha: float, least: int) -> None:
    assert min_changed_queries(alpha) == least


def test_the_least_number_is_what_the_sign_flip_test_gives() -> None:
    # Every query fell by the same amount: the most extreme the test can be shown.
    five = randomization_p([-3.0] * 5, flips=FLIPS, seed=SEED)
    six = randomization_p([-3.0] * 6, flips=FLIPS, seed=SEED)
    assert five >= 0.05 > six
    assert abs(five - 2 / 2**5) < 0.01 and abs(six - 2 / 2**6) < 0.01
    # Unchanged queries flip nothing: five changed among fifty still cannot reach 0.05.
    assert randomization_p([-3.0] * 5 + [0.0] * 45, flips=FLIPS, seed=SEED) >= 0.05


@pytest.fixture
def smtp_configured() -> Iterator[None]:
    previous = delivery.install_config(DeliveryConfig(smtp_url="smtp://127.0.0.1:9"))
    yield
    delivery.install_config(previous)


def test_the_api_notes_the_least_changed_queries_and_missing_smtp(api: ApiUser) -> None:
    case_id, _ = new_case(api)
    url = f"/api/v1/cases/{case_id}/alerts"
    body = {"kind": "significant_drop", "email": ["oncall@example.com"]}
    created = api.post(url, json=body)
    assert created.status_code == 201
    least, smtp = created.json()["notes"]
    assert least.startswith("Fires only when at least 6 queries changed score")
    assert "alpha = 0.05" in least
    assert smtp.startswith("No SMTP server is configured (RELEVO_SMTP_URL)")
    strict = api.post(url, json={"kind": "significant_drop", "alpha": 0.01}).json()
    assert strict["notes"][0].startswith("Fires only when at least 8 queries")
    plain = api.post(url, json={"kind": "below", "threshold": 50}).json()
    assert plain["notes"] == []
    listed = {a["id"]: a["notes"] for a in api.get(url).json()}
    assert listed[created.json()["id"]] == [least, smtp]
    assert api.get(f"{url}/{strict['id']}").json()["notes"] == strict["notes"]


def test_with_smtp_configured_there_is_no_e_mail_note(api: ApiUser, smtp_configured: None) -> None:
    case_id, _ = new_case(api)
    body = {"kind": "below", "threshold": 50, "email": ["oncall@example.com"]}
    created = api.post(f"/api/v1/cases/{case_id}/alerts", json=body).json()
    assert created["notes"] == []


def test_the_page_says_it_when_the_alert_is_added_and_on_the_rule(
    api: ApiUser, client: TestClient
) -> None:
    case_id, _ = new_case(api)
    token = login(client, api.email)
    page = soup(client.get(f"/cases/{case_id}/watch"))
    assert "RELEVO_SMTP_URL" in one(page, "#no-smtp").get_text()
    form = {"csrf_token": token, "kind": "significant_drop", "email": "oncall@example.com"}
    added = client.post(f"/cases/{case_id}/alerts", data=form, follow_redirects=False)
    assert added.status_code == 303
    page = soup(client.get(added.headers["location"]))
    notice = one(page, "#alert-added")
    assert notice.get_text(" ", strip=True).startswith("Alert added: Significant drop.")
    said = [p.get_text() for p in notice.select(".alert-note")]
    assert said[0].startswith("Fires only when at least 6 queries changed score")
    assert said[1].startswith("No SMTP server is configured")
    (rule,) = page.select("#alert-rules li")
    assert one(rule, ".alert-kind").get_text() == "Significant drop"
    assert [p.get_text() for p in rule.select(".alert-note")] == said
    # With htmx, the card swapped in says the same.
    card = soup(
        client.post(
            f"/cases/{case_id}/alerts",
            data={**form, "alpha": "0.01"},
            headers={"HX-Request": "true"},
        )
    )
    assert (
        one(card, "#alert-added .alert-note")
        .get_text()
        .startswith("Fires only when at least 8 queries")
    )
    # A later visit to the page no longer says "added".
    assert soup(client.get(f"/cases/{case_id}/watch")).select("#alert-added") == []


def test_each_drop_rule_names_the_metric_it_watches(api: ApiUser, client: TestClient) -> None:
    case_id, _ = new_case(api)
    case = api.get(f"/api/v1/cases/{case_id}").json()
    scorers = {s["id"]: s["name"] for s in api.get("/api/v1/scorers").json()}
    primary = scorers[case["scorer_id"]]
    other = next(i for i, n in scorers.items() if n in ("P@10", "NDCG@10") and n != primary)
    assert api.patch(f"/api/v1/cases/{case_id}", json={"metric_scorer_ids": [other]}).is_success
    url = f"/api/v1/cases/{case_id}/alerts"
    for extra in ({}, {"metric_scorer_id": other}):
        made = api.post(url, json={"kind": "drop", "points": 5, **extra})
        assert made.status_code == 201, made.text
    login(client, api.email)
    rules = soup(client.get(f"/cases/{case_id}/watch")).select("#alert-rules li")
    said = [" ".join(rule.get_text(" ", strip=True).split()) for rule in rules]
    # Two drops of 5 points read differently: each names its metric.
    assert [one(rule, ".alert-metric").get_text() for rule in rules] == [primary, scorers[other]]
    assert said[0].startswith(f"Drop of {primary} by 5.0 points from the previous run")
    assert said[1].startswith(f"Drop of {scorers[other]} by 5.0 points from the previous run")

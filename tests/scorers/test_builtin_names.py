"""A user's scorer never takes a built-in's name, in any case (issue 36 item 8)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.pages import login, one, soup

JS = {"kind": "javascript", "code": "setScore(1)", "scale": [0, 1, 2, 3]}


@pytest.mark.parametrize("name", ["AP@10", "ap@10", "nDCG@10", "classic", "  ERR@10 "])
def test_a_new_scorer_named_as_a_builtin_is_refused(api: ApiUser, name: str) -> None:
    before = len(api.get("/api/v1/scorers").json())
    answer = api.post("/api/v1/scorers", json={"name": name, **JS})
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail[0]["loc"] == ["body", "name"]
    assert "is the name of a built-in scorer" in detail[0]["msg"]
    assert len(api.get("/api/v1/scorers").json()) == before  # nothing was stored


def test_a_scorer_cannot_be_renamed_to_a_builtins_name(api: ApiUser) -> None:
    made = api.post("/api/v1/scorers", json={"name": "AP@10 (mine)", **JS})
    assert made.status_code == 201, made.text
    scorer_id = made.json()["id"]
    answer = api.patch(f"/api/v1/scorers/{scorer_id}", json={"name": "Ap@10"})
    assert answer.status_code == 422, answer.text
    assert api.get(f"/api/v1/scorers/{scorer_id}").json()["name"] == "AP@10 (mine)"
    # Any other change, or another name, is fine.
    assert api.patch(f"/api/v1/scorers/{scorer_id}", json={"name": "AP@5"}).status_code == 200


def test_the_scorer_editor_says_so_next_to_the_name(api: ApiUser, client: TestClient) -> None:
    login(client)
    page = soup(client.get("/scorers/new"))
    form = one(page, "#scorer-form")
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {str(t["name"]): t.get_text() for t in form.select("textarea[name]")}
    values |= {"kind": "javascript", "name": "p@10", "action": "save"}
    refused = client.post("/scorers", data=values)
    assert refused.status_code == 422
    message = one(soup(refused), ".field-error[data-field=name]").get_text()
    assert '"p@10" is the name of a built-in scorer' in message

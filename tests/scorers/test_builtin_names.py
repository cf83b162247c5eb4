"""A user's scorer never takes a built-in's name, in any case (issue 36 item 8)."""

from __future__ import annotations

import pytest

from tests.fixtures.users import ApiUser

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

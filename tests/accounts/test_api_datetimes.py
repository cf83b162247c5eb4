"""Every API datetime is written one way, ISO 8601 in UTC ending in Z, whether the row was
just written or read back (SQLite hands back naive datetimes, PostgreSQL aware ones)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tests.fixtures.users import ApiUser
from tests.support.pages import movies_case

UTC_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_api_key_times_read_the_same_written_and_read_back(api: ApiUser) -> None:
    created = api.post(
        "/api/v1/api-keys", json={"name": "ci", "expires_at": "2031-05-01T12:30:00+02:00"}
    ).json()
    assert UTC_Z.match(created["created_at"]), created["created_at"]
    assert created["expires_at"] == "2031-05-01T10:30:00Z"
    assert created["last_used_at"] is None
    # The new key's first use records last_used_at; then the key is read back.
    headers = {"Authorization": f"Bearer {created['key']}"}
    assert api.client.get("/api/v1/api-keys", headers=headers).status_code == 200
    listed = {k["id"]: k for k in api.get("/api/v1/api-keys").json()}
    again = listed[created["id"]]
    assert again["created_at"] == created["created_at"]
    assert again["expires_at"] == created["expires_at"]
    used = again["last_used_at"]
    assert used is not None and UTC_Z.match(used), used
    assert abs((datetime.now(UTC) - _instant(used)).total_seconds()) < 3600
    for key in listed.values():  # the fixture's own key too, written by the test setup
        for field in ("created_at", "last_used_at", "expires_at"):
            assert key[field] is None or UTC_Z.match(key[field]), (field, key[field])


def test_annotation_times_read_the_same_written_and_read_back(api: ApiUser) -> None:
    case_id = movies_case(api)
    path = f"/api/v1/cases/{case_id}/annotations"
    written = api.post(path, json={"text": "new synonyms", "at": "2026-03-01T09:00:00-05:00"})
    assert written.status_code == 201, written.text
    assert written.json()["at"] == "2026-03-01T14:00:00Z"
    read = next(a for a in api.get(path).json() if a["id"] == written.json()["id"])
    assert read["at"] == "2026-03-01T14:00:00Z"
    moved = api.patch(f"{path}/{read['id']}", json={"at": "2026-03-02T00:30:00+01:00"})
    assert moved.json()["at"] == "2026-03-01T23:30:00Z"

"""Shared test helpers (moved from tests/interop/test_quepid_case.py, which uses them too)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.fixtures.users import ApiUser

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "quepid"


IMPORT = "/api/v1/cases/import?format=quepid"


JSON_TYPE = {"Content-Type": "application/json"}


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def post(api: ApiUser, body: bytes | str | dict[str, Any]) -> Any:
    content = json.dumps(body) if isinstance(body, dict) else body
    return api.post(IMPORT, content=content, headers=JSON_TYPE)


def imported(api: ApiUser, body: dict[str, Any]) -> dict[str, Any]:
    response = post(api, body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def queries_of(api: ApiUser, case_id: int) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = api.get(f"/api/v1/cases/{case_id}/queries").json()
    return result


def with_code(data: dict[str, Any], scale: list[int]) -> dict[str, Any]:
    """The export with a scorer that carries its code (as Quepid 7 wrote it)."""
    changed = copy.deepcopy(data)
    changed["scorer"] = {"name": "Mine", "code": "setScore(docs.length);", "scale": scale}
    return changed


def export(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.get(f"/api/v1/cases/{case_id}/export", params={"format": "quepid"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert f'filename="case-{case_id}-quepid.json"' in response.headers["content-disposition"]
    result: dict[str, Any] = response.json()
    return result

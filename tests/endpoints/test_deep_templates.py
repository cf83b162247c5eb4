"""A template nested thousands deep is that try's error (or a 422 when saved), never a 500."""

from __future__ import annotations

import pytest

from app.search import TemplateError, validate_template
from app.search.templates import MAX_BODY_DEPTH
from app.vocabulary import Engine
from tests.fixtures.users import ApiUser

TOO_DEEP = f"template nests objects and lists more than {MAX_BODY_DEPTH} deep"


def _nested(depth: int) -> str:
    return '{"q": "#$query##", "a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def _endpoint(api: ApiUser, **body: object) -> int:
    body = {"name": "e", "url": "http://127.0.0.1:9/api", **body}
    response = api.post("/api/v1/search-endpoints", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


@pytest.mark.parametrize("depth", [MAX_BODY_DEPTH + 1, 5000])
@pytest.mark.parametrize(
    "engine",
    [
        {"engine": "searchapi", "method": "POST", "mapper_code": "docsMapper = d => []"},
        {"engine": "opensearch"},
    ],
)
def test_a_deep_template_is_the_trys_error(
    api: ApiUser, depth: int, engine: dict[str, str]
) -> None:
    endpoint_id = _endpoint(api, **engine)
    response = api.post(
        f"/api/v1/search-endpoints/{endpoint_id}/try",
        json={"query_text": "x", "template": _nested(depth)},
    )
    assert response.status_code == 200, response.text
    assert (response.json()["error"], response.json()["docs"]) == (TOO_DEEP, [])
    # Saved in a case, it is refused as the template's error.
    created = api.post(
        "/api/v1/cases",
        json={"name": "c", "search_endpoint_id": endpoint_id, "query_template": _nested(depth)},
    )
    assert created.status_code == 422, created.text
    assert TOO_DEEP in created.text


def test_a_template_at_the_bound_still_renders() -> None:
    validate_template(Engine.OPENSEARCH, _nested(MAX_BODY_DEPTH))
    with pytest.raises(TemplateError, match=TOO_DEEP):
        validate_template(Engine.OPENSEARCH, _nested(MAX_BODY_DEPTH + 1))

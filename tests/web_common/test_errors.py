"""One error shape everywhere: {"detail": ...}, for every error class and the 500 handler."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI, HTTPException
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.errors import BadRequest, Conflict, Invalid, NotFound
from app.web_common.errors import install_error_handlers
from tests.fixtures.users import ApiUser


class _Body(BaseModel):
    n: int


def _app() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    raised: dict[str, Exception] = {
        "not-found": NotFound("No case 7."),
        "conflict": Conflict("Still running."),
        "bad-request": BadRequest("Choose a run."),
        "invalid": Invalid("rows", "must be at most 500"),
        "http": HTTPException(status_code=401, detail="Sign in."),
        "bug": ZeroDivisionError("a bug"),
    }

    @app.get("/raise/{name}")
    def fail(name: str) -> None:
        raise raised[name]

    @app.post("/body")
    def body(value: _Body) -> int:
        return value.n

    return app


EXPECTED: list[tuple[str, int, Any]] = [
    ("/raise/not-found", 404, "No case 7."),
    ("/raise/conflict", 409, "Still running."),
    ("/raise/bad-request", 400, "Choose a run."),
    (
        "/raise/invalid",
        422,
        [{"loc": ["body", "rows"], "msg": "must be at most 500", "type": "value_error"}],
    ),
    ("/raise/http", 401, "Sign in."),
    ("/raise/bug", 500, "Internal error; it has been logged."),
    ("/no-such-route", 404, "Not Found"),
]


@pytest.mark.parametrize(("path", "status", "detail"), EXPECTED)
def test_every_error_class_answers_with_detail_only(path: str, status: int, detail: Any) -> None:
    with TestClient(_app(), raise_server_exceptions=False) as client:
        response = client.get(path)
    assert (response.status_code, response.json()) == (status, {"detail": detail})


def test_an_invalid_body_is_a_422_naming_the_field() -> None:
    with TestClient(_app()) as client:
        response = client.post("/body", json={"n": "many"})
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert set(response.json()) == {"detail"}
    assert (error["loc"], error["type"]) == (["body", "n"], "int_parsing")
    assert set(error) == {"loc", "msg", "type"}


def test_the_app_answers_its_own_errors_in_the_same_shape(api: ApiUser) -> None:
    unauthenticated = api.client.get("/api/v1/cases")
    missing = api.get("/api/v1/cases/999999")
    invalid = api.post("/api/v1/search-endpoints", json={"name": "x", "engine": "lucene"})
    for response, status in ((unauthenticated, 401), (missing, 404), (invalid, 422)):
        assert response.status_code == status
        assert set(response.json()) == {"detail"}
    assert missing.json()["detail"] == "No case with id 999999."

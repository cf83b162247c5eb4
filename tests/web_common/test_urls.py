"""Templates' url_for builds each route's path once and gives the router's own answer."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.requests import Request

from app.web_common.urls import url_for


def _request(app: FastAPI) -> Request:
    scope = {
        "type": "http",
        "app": app,
        "scheme": "https",
        "server": ("relevo.example", 443),
        "path": "/",
        "root_path": "",
        "headers": [(b"host", b"relevo.example")],
        "query_string": b"",
    }
    return Request(scope)


def test_links_are_the_routers_links(app: FastAPI) -> None:
    request = _request(app)
    context = {"request": request}
    cases: list[tuple[str, dict[str, Any]]] = [
        ("case_page", {"case_id": 7}),
        ("query_history_page", {"case_id": 7, "query_id": 12}),
        ("query_history_page", {"query_id": "0012", "case_id": "7"}),  # digits kept as typed
        ("endpoint_page", {"endpoint_id": 3}),
        ("static", {"path": "relevo.css"}),  # not a number: the router builds it
        ("endpoints_page", {}),
    ]
    for name, params in cases:
        fast = url_for(context, name, **params)
        assert str(fast) == str(request.url_for(name, **params)), name
    again = url_for(context, "query_history_page", case_id=8, query_id=99)
    assert str(again) == "https://relevo.example/cases/8/queries/99/history"
    with_query = again.include_query_params(metric=4)
    assert str(with_query) == "https://relevo.example/cases/8/queries/99/history?metric=4"

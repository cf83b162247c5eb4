"""The interactive API docs at /docs, served from vendored Swagger UI files (no CDN)."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

__all__ = ["router"]

router = APIRouter(include_in_schema=False)


@router.get("/docs", name="api_docs")
def api_docs(request: Request) -> HTMLResponse:
    """Return the Swagger UI page; scripts come from /static, so the CSP allows no inline code."""

    def static(path: str) -> str:
        return escape(str(request.url_for("static", path=f"swagger-ui/{path}")))

    schema = escape(str(request.url_for("openapi")))
    return HTMLResponse(
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<title>Relevo API</title>"
        f'<link rel=stylesheet href="{static("swagger-ui.css")}"></head>'
        f'<body><div id=swagger-ui data-schema="{schema}"></div>'
        f'<script src="{static("swagger-ui-bundle.js")}"></script>'
        f'<script src="{static("init.js")}"></script></body></html>'
    )

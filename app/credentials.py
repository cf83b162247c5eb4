"""Secrets and the URLs they go to: a URL's ``user:password@`` taken out (to be sealed), and
the origin (scheme, host, port) that stored secrets belong to."""

from __future__ import annotations

import base64

import httpx

__all__ = ["basic_authorization", "origin", "split_credentials"]


def split_credentials(url: str) -> tuple[str, str | None]:
    """Return the URL without ``user:password@`` and those credentials (None when it has none).

    Raises ``httpx.InvalidURL`` for a URL that cannot be parsed.
    """
    parsed = httpx.URL(url)
    if not parsed.userinfo:
        return url, None
    clean = str(parsed.copy_with(username=None, password=None))
    return clean, f"{parsed.username}:{parsed.password}"


def basic_authorization(credentials: str) -> str:
    """Return the ``Authorization`` header value of ``user:password`` credentials."""
    return "Basic " + base64.b64encode(credentials.encode("utf-8")).decode("ascii")


def origin(url: str) -> tuple[str, str, int]:
    """Return a URL's (scheme, host, port); an unparsable URL is an origin of its own."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return ("", url, 0)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return parsed.scheme, parsed.host.lower(), port

"""What an API key may do: its scopes, and which scope each API request needs.

``read`` reads; ``run`` starts runs, sweeps and searches (it spends engine time, never
changes what a case is); ``write`` changes things (cases, queries, ratings, annotations, a
try applied); ``judge`` may spend on language models (judge runs and trials). A browser
session has every right; so has every key made before scopes existed (migration 0025).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.errors import Invalid

__all__ = [
    "ALL_SCOPES",
    "SCOPES",
    "join_scopes",
    "missing_scope_message",
    "parse_scopes",
    "required_scope",
    "split_scopes",
]

SCOPES: tuple[str, ...] = ("read", "run", "write", "judge")
ALL_SCOPES = " ".join(SCOPES)

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# POST paths (under /api/v1) that spend a language model's tokens: the `judge` scope.
_JUDGE = re.compile(r"/judges/\d+/test$|/judge-runs(/\d+/(retry|resume))?$")
# POST paths that run searches without changing anything: the `run` scope.
_RUN = re.compile(
    r"/cases/\d+/runs(/\d+/(cancel|rescore))?$|/cases/\d+/sweeps(/\d+/cancel)?$"
    r"|/search-endpoints/\d+/(try|test)$|/score$"
)


def split_scopes(stored: str | None) -> list[str]:
    """Return a key's stored scopes as a list, in the canonical order."""
    given = set((stored or "").split())
    return [scope for scope in SCOPES if scope in given]


def join_scopes(scopes: Iterable[str]) -> str:
    """Return the stored form of these scopes."""
    return " ".join(split_scopes(" ".join(scopes)))


def parse_scopes(scopes: Iterable[str] | None) -> str:
    """Check the asked scopes (None: every one) and return their stored form."""
    if scopes is None:
        return ALL_SCOPES
    asked = [str(s).strip().lower() for s in scopes if str(s).strip()]
    unknown = sorted(set(asked) - set(SCOPES))
    if unknown:
        raise Invalid(
            "scopes",
            f"Unknown scope {unknown[0]!r}: a key's scopes are {', '.join(SCOPES)}.",
        )
    if not asked:
        raise Invalid("scopes", "A key needs at least one scope (read, run, write or judge).")
    return join_scopes(asked)


def required_scope(method: str, path: str) -> str:
    """Return the scope an API request needs: read to read, run to run, judge to spend on
    language models, write for every other change."""
    if method.upper() in _SAFE_METHODS:
        return "read"
    path = path.rstrip("/")
    if method.upper() == "POST" and _JUDGE.search(path):
        return "judge"
    if method.upper() == "POST" and _RUN.search(path):
        return "run"
    return "write"


def missing_scope_message(scope: str, stored: str | None) -> str:
    """Return the sentence that refuses a key without the scope."""
    has = ", ".join(split_scopes(stored)) or "none"
    return f"This API key lacks the '{scope}' scope (its scopes: {has})."

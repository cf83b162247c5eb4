"""Reading a Quepid export's scorer into plain data (no database): its name and, in older
Quepid exports or Relevo's own, its code, scale, maximum score and environment."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.interop.quepid_values import _missing, _number, _required, _text, _wrong

QUEPID_ENVIRONMENT = "quepid"


# Imported Quepid scorers are named "AP@10 (Quepid)", so they are not taken for the built-in
# presets of the same name (which compute other numbers). Before, they were named as in
# Quepid ("AP@10"); a scorer imported under that name is still found and reused.
QUEPID_SUFFIX = " (Quepid)"


ENVIRONMENTS = ("relevo", QUEPID_ENVIRONMENT)


@dataclass
class QuepidScorer:
    """The export's scorer: usually its name only; older exports also give code and scale."""

    name: str
    code: str | None
    scale: list[float] | None
    max_score: float | None = None  # written by Relevo's export only
    environment: str | None = None  # likewise


def read_scorer(data: dict[str, Any]) -> QuepidScorer:
    """Return the export's `scorer`; 422 naming its first missing or wrong key."""
    name = _text(_required(data, "name", ("scorer",)), ("scorer", "name"))
    assert name is not None
    if not name.strip():
        raise _missing(("scorer", "name"))
    code = _text(data.get("code"), ("scorer", "code"), optional=True)
    scale = _scale(data.get("scale"))
    max_score = data.get("max_score")
    environment = data.get("environment")
    if environment is not None and environment not in ENVIRONMENTS:
        raise _wrong(("scorer", "environment"), '"relevo" or "quepid"')
    return QuepidScorer(
        name=name.strip(),
        code=code if code and code.strip() else None,
        scale=scale,
        max_score=None if max_score is None else _number(max_score, ("scorer", "max_score")),
        environment=environment,
    )


def _scale(raw: Any) -> list[float] | None:
    """Return the scorer's scale: a list of numbers or Quepid's "0, 1, 2, 3"; None if empty."""
    if isinstance(raw, str):
        raw = [part for part in re.split(r"[\s,\[\]]+", raw) if part]
    if raw is None or raw == []:
        return None
    if not isinstance(raw, list):
        raise _wrong(("scorer", "scale"), "a list of numbers")
    return [_number(v, ("scorer", "scale", i)) for i, v in enumerate(raw)]

"""The scorers present in every fresh database (SCORING.md's preset table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Preset:
    """A built-in scorer definition, stored as a read-only scorer when a database is seeded."""

    name: str
    kind: str
    params: Mapping[str, Any]
    scale: tuple[float, ...]
    scale_labels: dict[str, str] | None
    max_score: float = 100.0


_BINARY = (0, 1)
_GRADED = (0, 1, 2, 3)

PRESETS: tuple[Preset, ...] = (
    Preset("Classic", "classic", {"k": 10}, tuple(range(1, 11)), None),
    Preset(
        "NDCG@10",
        "ndcg",
        {"k": 10, "gain": "linear", "ideal": "rated", "unrated": "zero"},
        _GRADED,
        {"0": "Poor", "1": "Fair", "2": "Good", "3": "Perfect"},
    ),
    Preset("DCG@10", "dcg", {"k": 10, "gain": "exponential"}, _GRADED, None),
    Preset("CG@10", "cg", {"k": 10}, _GRADED, None),
    Preset(
        "P@10",
        "precision",
        {"k": 10, "threshold": 1},
        _BINARY,
        {"0": "Irrelevant", "1": "Relevant"},
    ),
    Preset("AP@10", "average_precision", {"k": 10, "threshold": 1}, _BINARY, None),
    Preset("RR@10", "reciprocal_rank", {"k": 10, "threshold": 1}, _BINARY, None),
    Preset("ERR@10", "err", {"k": 10}, _GRADED, None),
)


_BUILTIN_NAMES = frozenset(preset.name.casefold() for preset in PRESETS)


def is_builtin_name(name: str) -> bool:
    """Return whether the name is a built-in preset's, in any case (spaces trimmed)."""
    return " ".join(name.split()).casefold() in _BUILTIN_NAMES

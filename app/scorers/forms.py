"""The scorer editor's form: kind, code or metric, scale and parameters.

It reads the posted text, builds the API body the scorer service takes (the same body as the
REST API) and collects every error by field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from app.scorers.schemas import ScorerCreate, ScorerRead, ScorerUpdate
from app.scoring import PRESETS
from app.scoring.presets import Preset
from app.vocabulary import ScorerKind
from app.web_common.forms import FormErrors, WebForm, is_number

__all__ = ["ENVIRONMENTS", "KIND_PRESETS", "SCALE_PRESETS", "ScorerForm"]


@dataclass(frozen=True)
class ScalePreset:
    """A scale as the scorer form shows it: values and labels as typed in the boxes."""

    title: str
    scale: str
    labels: str
    params: str = ""


def _preset_of(preset: Preset) -> ScalePreset:
    return ScalePreset(
        title=preset.name,
        scale=", ".join(f"{v:g}" for v in preset.scale),
        labels="\n".join(f"{k}={v}" for k, v in (preset.scale_labels or {}).items()),
        params="\n".join(f"{k}={v}" for k, v in preset.params.items()),
    )


# What a new scorer of each built-in kind starts with: its preset's parameters and scale.
KIND_PRESETS = {preset.kind: _preset_of(preset) for preset in PRESETS}
# Scales a user picks from instead of typing them.
SCALE_PRESETS = {
    "graded": ScalePreset(
        "0 to 3: Poor, Fair, Good, Perfect", "0, 1, 2, 3", "0=Poor\n1=Fair\n2=Good\n3=Perfect"
    ),
    "binary": ScalePreset("0 or 1: Irrelevant, Relevant", "0, 1", "0=Irrelevant\n1=Relevant"),
    "classic": ScalePreset("1 to 10", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10", ""),
}
ENVIRONMENTS = ("relevo", "quepid")


class ScorerForm(WebForm):
    """The scorer editor: the kind decides which fields count (code only for JavaScript)."""

    fields: ClassVar[tuple[str, ...]] = (
        "name",
        "kind",
        "code",
        "params",
        "scale",
        "labels",
        "max_score",
        "environment",
        "scale_preset",
    )
    labels: ClassVar[Mapping[str, str]] = {
        "name": "Name",
        "kind": "Kind",
        "code": "JavaScript code",
        "params": "Parameters",
        "scale": "Scale",
        "scale_labels": "Labels",
        "labels": "Labels",
        "max_score": "Max score",
        "environment": "Environment",
    }

    @classmethod
    def of(cls, scorer: ScorerRead) -> ScorerForm:
        """Return the form showing a stored scorer."""
        return cls(
            {
                "name": scorer.name,
                "kind": scorer.kind,
                "code": scorer.code or "",
                "params": "\n".join(f"{k}={v}" for k, v in scorer.params.items()),
                "scale": ", ".join(f"{v:g}" for v in scorer.scale),
                "labels": "\n".join(f"{k}={v}" for k, v in (scorer.scale_labels or {}).items()),
                "max_score": f"{scorer.max_score:g}",
                "environment": scorer.environment,
            }
        )

    @property
    def is_javascript(self) -> bool:
        """Whether the form's kind runs the user's code."""
        return self.text("kind") == ScorerKind.JAVASCRIPT

    def error_field(self, dotted: str) -> str:
        """Label errors (``scale_labels.<value>``) belong to the labels box."""
        field = dotted.split(".")[0]
        return "labels" if field == "scale_labels" else field

    def spec(self) -> dict[str, Any]:
        """Return the scorer's settings as the API takes them (kind included); any problem
        raises FormErrors."""
        spec = self._spec()
        if self.errors:
            raise FormErrors(self.errors)
        return spec

    def _spec(self) -> dict[str, Any]:
        """Return the scorer's settings, a field that cannot be read left empty (its error
        recorded).

        A scale preset picked in the form wins over the typed scale (so the picker works
        without the page's script too).
        """
        picked = SCALE_PRESETS.get(self.text("scale_preset"))
        if picked is not None:
            self.values.update(scale=picked.scale, labels=picked.labels, scale_preset="")
        javascript = self.is_javascript
        spec: dict[str, Any] = {
            "kind": self.text("kind"),
            "code": (str(self.values["code"]) or None) if javascript else None,
            "params": None if javascript else self._params(),
            "scale": self._scale(),
            "scale_labels": self._labels(),
            "max_score": self._max_score() if javascript else None,
            "environment": self._environment() if javascript else None,
        }
        return spec

    def create_body(self) -> ScorerCreate:
        """Return the scorer to create."""
        # Every field goes to validation, even beside another field's error: leaving the
        # settings out made a filled scale "required".
        values = {"name": self.values["name"], **self._spec()}
        return self.validate(ScorerCreate, values)

    def update_body(self) -> ScorerUpdate:
        """Return the changes to a scorer (its kind stays)."""
        values = {"name": self.values["name"], **self._spec()}
        del values["kind"]
        return self.validate(ScorerUpdate, values)

    def _params(self) -> dict[str, Any] | None:
        params: dict[str, Any] = {}
        for line in self.lines(str(self.values["params"])):
            key, sep, raw = line.partition("=")
            if not sep or not key.strip():
                self.fail("params", f"Write one 'name=value' per line, not {line.strip()!r}.")
                return None
            params[key.strip()] = _number_or_text(raw.strip())
        return params or None

    def _scale(self) -> list[float]:
        parts = [p for p in re.split(r"[\s,]+", self.text("scale")) if p]
        if not parts:
            self.fail("scale", "Scale is required: the ratings allowed, e.g. '0, 1, 2, 3'.")
            return []
        if not all(is_number(p) for p in parts):
            self.fail("scale", "Write the scale as numbers, e.g. '0, 1, 2, 3'.")
            return []
        return [float(p) for p in parts]

    def _labels(self) -> dict[str, str] | None:
        labels: dict[str, str] = {}
        for line in self.lines(str(self.values["labels"])):
            key, sep, label = line.partition("=")
            if not sep:
                self.fail("labels", f"Write one 'value=label' per line, not {line.strip()!r}.")
                return None
            labels[key.strip()] = label.strip()
        return labels or None

    def _max_score(self) -> float | None:
        text = self.text("max_score")
        if not text:
            return None
        if not is_number(text):
            self.fail("max_score", "Max score must be a number, e.g. 100.")
            return None
        return float(text)

    def _environment(self) -> str:
        environment = self.text("environment") or "relevo"
        if environment not in ENVIRONMENTS:
            self.fail("environment", "Environment must be Relevo or Quepid.")
        return environment


def _number_or_text(raw: str) -> Any:
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            continue
    return raw

"""The page forms, one class per HTML form: new case, case settings, queries, query notes,
scorer, endpoint.

Each reads the posted text, builds the API body the services take (the same bodies as the
REST API) and collects every error by field, so a handler is: read → body → one service
call → redirect, or the form again with its errors (422).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from starlette.datastructures import FormData

from app.cases.schemas import NOTES_MAX_LENGTH, BulkQueries, CaseCreate, CaseUpdate, QueryUpdate
from app.endpoints.service import DEFAULT_TEMPLATES
from app.scorers.schemas import ScorerCreate, ScorerRead, ScorerUpdate
from app.scoring import PRESETS
from app.scoring.presets import Preset
from app.search import FieldSpecError, TemplateError, parse_field_spec, validate_template
from app.vocabulary import Engine, ScorerKind
from app.web_common.forms import FormErrors, WebForm, field_text

__all__ = [
    "ENVIRONMENTS",
    "KIND_PRESETS",
    "SCALE_PRESETS",
    "CaseChoices",
    "CaseSettingsForm",
    "NewCaseForm",
    "NotesForm",
    "QueriesForm",
    "ScorerForm",
]

KNOB_PREFIX = "knob."
_CASE_LABELS = {
    "name": "Name",
    "search_endpoint_id": "Search endpoint",
    "query_template": "Query template",
    "field_spec": "Field spec",
    "rows": "Rows",
    "scorer_id": "Scorer",
    "knobs": "Knobs",
}


@dataclass(frozen=True)
class CaseChoices:
    """What a case form may pick from: the user's endpoints (id → engine) and scorers."""

    engines: Mapping[str, Engine]
    scorer_ids: frozenset[str]
    options: Mapping[str, Any] = field(default_factory=dict)  # the case's, for its template
    endpoint_id: str = ""  # the endpoint a blank choice keeps (settings only)


class _CaseForm(WebForm):
    """What the new-case and settings forms share: each field checked on its own, so every
    problem shows at once (the template and the field spec too, not only once the rest is
    right)."""

    fields: ClassVar[tuple[str, ...]] = (
        "name",
        "search_endpoint_id",
        "query_template",
        "field_spec",
        "rows",
        "scorer_id",
    )
    labels: ClassVar[Mapping[str, str]] = _CASE_LABELS

    def check_choices(self, choices: CaseChoices) -> Engine | None:
        """Record a pick that is not offered; return the chosen endpoint's engine."""
        endpoint_id = self.text("search_endpoint_id") or choices.endpoint_id
        engine = choices.engines.get(endpoint_id)
        if engine is None:
            self.fail("search_endpoint_id", "Pick a search endpoint.")
        scorer_id = self.text("scorer_id")
        if scorer_id and scorer_id not in choices.scorer_ids:
            self.fail("scorer_id", "Pick a scorer from the list.")
        return engine

    def check_search(
        self, engine: Engine | None, template: str, options: Mapping[str, Any]
    ) -> None:
        """Record what the case service would refuse in the template and the field spec
        (it checks them again when saving)."""
        if template and engine is not None:
            try:
                validate_template(engine, template, case_options=options)
            except TemplateError as exc:
                self.fail("query_template", _sentence(str(exc)))
        if self.text("field_spec"):
            try:
                parse_field_spec(self.text("field_spec"))
            except FieldSpecError as exc:
                self.fail("field_spec", _sentence(str(exc)))


class NewCaseForm(_CaseForm):
    """The new-case form on the cases list."""

    def body(self, choices: CaseChoices) -> CaseCreate:
        """Return the case to create; a blank template takes the endpoint's engine default."""
        values: dict[str, Any] = {k: self.text(k) for k in self.fields if self.text(k)}
        engine = self.check_choices(choices)
        if not values.get("query_template") and engine is not None:
            values["query_template"] = DEFAULT_TEMPLATES[engine]
        self.check_search(engine, values.get("query_template", ""), choices.options)
        return self.validate(CaseCreate, values)


class CaseSettingsForm(_CaseForm):
    """The settings form on the case page (search settings, knobs, scorer)."""

    order: ClassVar[tuple[str, ...]] = (
        "name",
        "search_endpoint_id",
        "query_template",
        "knobs",
        "field_spec",
        "rows",
        "scorer_id",
    )

    @classmethod
    def read(cls, form: FormData) -> Self:
        """Return the form with its fields and every ``knob.<name>`` field as a knob."""
        read = super().read(form)
        read.values["knobs"] = {
            key.removeprefix(KNOB_PREFIX): field_text(form, key)
            for key in form
            if key.startswith(KNOB_PREFIX)
        }
        return read

    def body(self, choices: CaseChoices) -> CaseUpdate:
        """Return the changes; a case needs its name, other blank fields stay as they are."""
        if not self.text("name"):
            self.fail("name", "Name is required.")
        values: dict[str, Any] = {k: self.text(k) for k in self.fields if self.text(k)}
        values["query_template"] = self.text("query_template") or None
        engine = self.check_choices(choices)
        self.check_search(engine, self.text("query_template"), choices.options)
        knobs: dict[str, str] = {}
        for name, raw in self.values["knobs"].items():
            text = str(raw).strip()
            if text and not _is_number(text):
                self.fail("knobs", f"Knob {name} must be a number, not {text!r}.")
            elif text:
                knobs[name] = text
        values["knobs"] = knobs
        return self.validate(CaseUpdate, values)


class QueriesForm(WebForm):
    """The paste-your-queries box on the case page."""

    fields: ClassVar[tuple[str, ...]] = ("queries",)
    labels: ClassVar[Mapping[str, str]] = {"queries": "Queries"}

    def body(self) -> BulkQueries:
        """Return the queries, one a line; an empty box is an error, not a silent no-op."""
        texts = [line.strip() for line in self.lines(str(self.values["queries"]))]
        if not texts:
            self.fail("queries", "Type at least one query, one per line.")
        return self.validate(BulkQueries, {"queries": texts})

    def error_field(self, dotted: str) -> str:
        """Every problem of a line belongs to the box."""
        return "queries"


class NotesForm(WebForm):
    """A query's information need and notes, edited under the query on the case page."""

    fields: ClassVar[tuple[str, ...]] = ("information_need", "notes")
    labels: ClassVar[Mapping[str, str]] = {
        "information_need": "The information need",
        "notes": "Notes",
    }

    def body(self) -> QueryUpdate:
        """Return the query's new notes; a blank box clears its note."""
        values = {name: str(self.values[name]) for name in self.fields}
        for name, value in values.items():
            if len(value) > NOTES_MAX_LENGTH:
                self.fail(
                    name,
                    f"{self.labels[name]} is {len(value):,} characters long; at most "
                    f"{NOTES_MAX_LENGTH:,} are kept. Shorten it and save again.",
                )
        kept = {name: value if value.strip() else None for name, value in values.items()}
        return self.validate(QueryUpdate, kept)


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
        if not all(_is_number(p) for p in parts):
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
        if not _is_number(text):
            self.fail("max_score", "Max score must be a number, e.g. 100.")
            return None
        return float(text)

    def _environment(self) -> str:
        environment = self.text("environment") or "relevo"
        if environment not in ENVIRONMENTS:
            self.fail("environment", "Environment must be Relevo or Quepid.")
        return environment


def _sentence(message: str) -> str:
    """Return a checker's message ("template is empty") as a sentence to show a user."""
    return message[:1].upper() + message[1:]


def _is_number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return value == value and value not in (float("inf"), float("-inf"))


def _number_or_text(raw: str) -> Any:
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            continue
    return raw

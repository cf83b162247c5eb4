"""The case pages' forms: new case, case settings and the queries box.

Each reads the posted text, builds the API body the services take (the same bodies as the
REST API) and collects every error by field, so a handler is: read → body → one service
call → redirect, or the form again with its errors (422).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from starlette.datastructures import FormData

from app.cases.schemas import KNOB_RANGE, MAX_KNOB, CaseCreate, CaseUpdate
from app.endpoints.service import DEFAULT_TEMPLATES
from app.queries.schemas import BulkQueries
from app.search import FieldSpecError, TemplateError, parse_field_spec, validate_template
from app.vocabulary import Engine
from app.web_common.forms import WebForm, field_text, is_number

__all__ = ["CaseChoices", "CaseSettingsForm", "NewCaseForm", "QueriesForm"]

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
    templates: Mapping[str, str] = field(default_factory=dict)  # endpoint id → its default


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
        template = str(values.get("query_template", "")).replace("\r\n", "\n")
        # The form starts with the first endpoint's default; a default left untouched while
        # another endpoint was picked (no script to swap it) is that endpoint's default.
        untouched = {*DEFAULT_TEMPLATES.values(), *choices.templates.values()}
        if engine is not None and (not template.strip() or template in untouched):
            chosen = choices.templates.get(self.text("search_endpoint_id"))
            values["query_template"] = DEFAULT_TEMPLATES[engine] if chosen is None else chosen
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
            if text and not (is_number(text) and 0 <= float(text) <= MAX_KNOB):
                self.fail("knobs", f"Knob {name} must be {KNOB_RANGE}, not {text!r}.")
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


def _sentence(message: str) -> str:
    """Return a checker's message ("template is empty") as a sentence to show a user."""
    return message[:1].upper() + message[1:]

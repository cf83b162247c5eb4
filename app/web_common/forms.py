"""Form posts: the CSRF check written once, and the base of the typed page forms.

A page form (in its domain's forms.py, e.g. app/cases/forms.py) reads the posted fields,
keeps them to show again, turns them into an API body and collects its errors by field, in
the user's words: "Name is required", not the validator's "String should have at least 1 character".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Self, TypeVar

from fastapi import Depends, Form, HTTPException, Request
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from starlette.datastructures import FormData

from app.errors import Invalid
from app.security import csrf_matches

__all__ = [
    "CsrfChecked",
    "FormErrors",
    "WebForm",
    "check_csrf",
    "field_text",
    "form_errors",
    "friendly_message",
    "parse_body",
]

B = TypeVar("B", bound=BaseModel)
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def check_csrf(request: Request, csrf_token: Annotated[str, Form()] = "") -> None:
    """Refuse a form post whose token is not the session's (header X-CSRF-Token also counts)."""
    given = csrf_token or request.headers.get("x-csrf-token", "")
    if not csrf_matches(request.session.get("csrf"), given):
        raise HTTPException(403, "The form has expired or did not come from Relevo; reload it.")


CsrfChecked = Annotated[None, Depends(check_csrf)]


class FormErrors(Exception):
    """A form that cannot be saved: field name → message, shown next to the form."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors

    @classmethod
    def from_invalid(cls, exc: Invalid) -> FormErrors:
        """Return the form errors of a service's Invalid (422), every problem it carries."""
        errors: dict[str, str] = {}
        for loc, message in exc.problems:
            field = ".".join(str(part) for part in loc[1:]) or "form"
            errors.setdefault(field, message)
        return cls(errors)


def form_errors(exc: FormErrors | Invalid) -> dict[str, str]:
    """Return the messages of a form's or a service's errors by dotted field path."""
    return exc.errors if isinstance(exc, FormErrors) else FormErrors.from_invalid(exc).errors


def field_text(form: FormData, name: str) -> str:
    """Return a text field of the form ('' when absent or a file), NUL and lone surrogates
    replaced by U+FFFD as in stored documents."""
    value = form.get(name)
    return _UNSTORABLE.sub("\ufffd", value) if isinstance(value, str) else ""


def parse_body(
    model: type[B], values: dict[str, Any], labels: Mapping[str, str] | None = None
) -> B:
    """Return the API body built from form values; bad fields raise FormErrors, all at once,
    each in words a user reads (``labels`` name the fields)."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"]) or "form"
            name = str(error["loc"][0]) if error["loc"] else "form"
            label = (labels or {}).get(name) or _default_label(name)
            message = friendly_message(label, error, _bounds(model, name), _whole(model, name))
            errors.setdefault(field, message)
        raise FormErrors(errors) from exc


def _default_label(name: str) -> str:
    return name.removesuffix("_id").replace("_", " ").capitalize()


def _bounds(model: type[BaseModel], name: str) -> Bounds:
    """Return the bounds a numeric field allows, None where open."""
    info = model.model_fields.get(name)
    found: dict[str, Any] = {}
    for rule in info.metadata if info is not None else ():
        for key in ("ge", "gt", "le", "lt"):
            if hasattr(rule, key):
                found[key] = getattr(rule, key)
    return Bounds(**found)


def _whole(model: type[BaseModel], name: str) -> bool:
    """Return whether a field takes whole numbers only."""
    info = model.model_fields.get(name)
    return info is not None and info.annotation in (int, int | None)


def _range(bounds: Bounds, whole: bool) -> str:
    kind = "a whole number" if whole else "a number"
    low = bounds.ge if bounds.ge is not None else bounds.gt
    high = bounds.le if bounds.le is not None else bounds.lt
    if bounds.ge is not None and bounds.le is not None:
        return f"{kind} from {low:,} to {high:,}"
    parts = []
    if low is not None:
        parts.append(f"{'more than' if bounds.gt is not None else 'at least'} {low:,}")
    if high is not None:
        parts.append(f"{'less than' if bounds.lt is not None else 'at most'} {high:,}")
    return f"{kind} {' and '.join(parts)}" if parts else kind


@dataclass(frozen=True)
class Bounds:
    """The limits a numeric field declares (``Field(ge=..., le=...)``)."""

    ge: Any = None
    gt: Any = None
    le: Any = None
    lt: Any = None


_WHOLE = {"int_parsing", "int_type", "int_from_float", "int_parsing_size"}
_NUMBER = {"float_parsing", "float_type", "finite_number"}
_BOUND = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def friendly_message(
    label: str,
    error: ErrorDetails,
    bounds: Bounds | None = None,
    whole: bool = False,
) -> str:
    """Return a validation error as a sentence about the field a user filled in."""
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    bounds = bounds or Bounds()
    if kind == "missing" or (kind == "string_too_short" and ctx.get("min_length") == 1):
        return f"{label} is required."
    if kind == "string_too_short":
        return f"{label} needs at least {ctx['min_length']:,} characters."
    if kind == "string_too_long":
        return f"{label} can be at most {ctx['max_length']:,} characters long."
    if kind in _WHOLE:
        return f"{label} must be {_range(bounds, whole=True)}."
    if kind in _NUMBER or kind in _BOUND:
        return f"{label} must be {_range(bounds, whole=whole)}."
    if kind in ("enum", "literal_error"):
        return f"{label} must be one of {ctx.get('expected', 'the listed choices')}."
    if kind == "too_short":
        return f"{label} needs at least {ctx.get('min_length', 1)} value(s)."
    if kind == "too_long":
        return f"{label} can have at most {ctx.get('max_length')} values."
    message = str(error["msg"]).removeprefix("Value error, ")
    if message[:1].islower():  # a validator's "must be ...": say which field
        return f"{label} {message}" + ("" if message.endswith(".") else ".")
    return message


class WebForm:
    """A page form: the posted text of its fields, and its errors by field.

    Subclasses list their ``fields`` and ``labels`` and turn the text into an API body;
    ``fail`` and ``add`` collect errors so that every problem shows at once, next to its
    field, and the form is shown again with what the user typed.
    """

    fields: ClassVar[tuple[str, ...]] = ()
    labels: ClassVar[Mapping[str, str]] = {}
    # The order of the fields on the page, where it is not ``fields`` (errors are listed so).
    order: ClassVar[tuple[str, ...]] = ()

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values: dict[str, Any] = dict(values)
        self.errors: dict[str, str] = {}

    @classmethod
    def read(cls, form: FormData) -> Self:
        """Return the form with the posted text of its fields."""
        return cls({name: field_text(form, name) for name in cls.fields})

    def text(self, name: str) -> str:
        """Return a field's text, trimmed."""
        return str(self.values.get(name, "")).strip()

    def fail(self, field: str, message: str) -> None:
        """Record an error on a field (the first one per field is kept)."""
        self.errors.setdefault(field, message)

    def error_field(self, dotted: str) -> str:
        """Return the form field an error's dotted location belongs to."""
        return dotted.split(".")[0]

    def add(self, exc: FormErrors | Invalid) -> Self:
        """Record the errors of a failed parse or of a service's refusal."""
        for dotted, message in form_errors(exc).items():
            self.fail(self.error_field(dotted), message)
        self._in_form_order()
        return self

    def _in_form_order(self) -> None:
        # The summary lists the problems in the order the fields appear on the page.
        order = {name: n for n, name in enumerate(self.order or self.fields)}
        self.errors = dict(sorted(self.errors.items(), key=lambda e: order.get(e[0], len(order))))

    def validate(self, model: type[B], values: dict[str, Any]) -> B:
        """Return the API body; with any error recorded so far or found now, raise them all."""
        try:
            body = parse_body(model, values, self.labels)
        except FormErrors as exc:
            self.add(exc)
            raise FormErrors(self.errors) from exc
        if self.errors:
            self._in_form_order()
            raise FormErrors(self.errors)
        return body

    @staticmethod
    def lines(text: str) -> Sequence[str]:
        """Return the non-blank lines of a text box."""
        return [line for line in text.splitlines() if line.strip()]


def is_number(text: str) -> bool:
    """Whether the text is a finite number."""
    try:
        value = float(text)
    except ValueError:
        return False
    return value == value and value not in (float("inf"), float("-inf"))

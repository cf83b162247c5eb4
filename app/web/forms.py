"""Form posts: the CSRF check written once, and turning form fields into API bodies."""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Form, HTTPException, Request
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData

from app.errors import Invalid
from app.security import csrf_matches

__all__ = ["CsrfChecked", "FormErrors", "check_csrf", "field_text", "parse_body"]

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
        """Return the form errors of a service's Invalid (422)."""
        field = ".".join(str(part) for part in exc.loc[1:]) or "form"
        return cls({field: exc.message})


def form_errors(exc: FormErrors | Invalid) -> dict[str, str]:
    """Return the messages of a form's or a service's errors by dotted field path."""
    return exc.errors if isinstance(exc, FormErrors) else FormErrors.from_invalid(exc).errors


def field_text(form: FormData, name: str) -> str:
    """Return a text field of the form ('' when absent or a file), NUL and lone surrogates
    replaced by U+FFFD as in stored documents."""
    value = form.get(name)
    return _UNSTORABLE.sub("\ufffd", value) if isinstance(value, str) else ""


def parse_body(model: type[B], values: dict[str, Any]) -> B:
    """Return the API body built from form values; a bad field raises FormErrors."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"]) or "form"
            errors.setdefault(field, str(error["msg"]).removeprefix("Value error, "))
        raise FormErrors(errors) from exc

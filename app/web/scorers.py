"""Scorer pages: the list, the editor, and trying a scorer on one query of a case."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData

from app.deps import SessionDep, WebUser
from app.errors import Invalid, NotFound
from app.models import Query, User
from app.schemas.pages import ScorerPage, TryOutcome
from app.schemas.scorers import ScorerCreate, ScorerRead, ScorerUpdate
from app.services import access, scorer_pages
from app.services import scorers as scorer_service
from app.vocabulary import ScorerKind
from app.web.deps import FormDep, WebScorerDep
from app.web.errors import HtmlErrorRoute
from app.web.forms import CsrfChecked, FormErrors, field_text, form_errors, parse_body
from app.web.templating import render

router = APIRouter(route_class=HtmlErrorRoute)

KINDS: tuple[str, ...] = tuple(ScorerKind)
NEW_SCORER = {
    "name": "",
    "kind": ScorerKind.JAVASCRIPT,
    "params": "",
    "scale": "0, 1",
    "labels": "0=Irrelevant\n1=Relevant",
    "max_score": "100",
    "code": (
        "// Share of the top 10 results rated relevant, on 0-100.\n"
        "var hits = 0;\n"
        "for (var i = 0; i < 10; i++) {\n"
        "  if (hasDocRating(i) && docRating(i) > 0) { hits++; }\n"
        "}\n"
        'console.log("relevant in the top 10: " + hits);\n'
        "setScore(hits * 10);\n"
    ),
}
EDITOR_FIELDS = ("name", "kind", "code", "params", "scale", "labels", "max_score")


@router.get("/scorers", name="scorers_page")
def scorers_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the built-in presets and the user's scorers."""
    data = scorer_pages.scorers_page(session=session, user=user)
    return render(request, "scorers.html", {"user": user, "page": data})


@router.get("/scorers/new", name="scorer_new_page")
def new_scorer(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show an empty scorer editor."""
    data = scorer_pages.scorer_page(session=session, user=user, scorer=None)
    return _editor(request, user, data, dict(NEW_SCORER))


@router.post("/scorers", name="scorer_create_submit")
def create_scorer(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a scorer, or try the unsaved one on a query (the 'Try' button)."""
    values = {name: field_text(form, name) for name in EDITOR_FIELDS}
    data = scorer_pages.scorer_page(session=session, user=user, scorer=None)
    try:
        if field_text(form, "action") == "try":
            outcome = _try(session, user, values, form)
            return _editor(request, user, data, values, outcome=outcome)
        body = parse_body(ScorerCreate, _scorer_values(values, with_kind=True))
        scorer = scorer_service.create_scorer(session=session, user=user, body=body)
    except (FormErrors, Invalid) as exc:
        return _editor(request, user, data, values, errors=_errors(exc), status_code=422)
    return RedirectResponse(
        str(request.url_for("scorer_page", scorer_id=scorer.id)), status_code=303
    )


@router.get("/scorers/{scorer_id}", name="scorer_page")
def scorer_page(
    request: Request, scorer: WebScorerDep, user: WebUser, session: SessionDep
) -> Response:
    """Show the editor of a scorer (a preset is read-only but can be tried)."""
    data = scorer_pages.scorer_page(session=session, user=user, scorer=scorer)
    assert data.scorer is not None
    return _editor(request, user, data, _values_of(data.scorer))


@router.post("/scorers/{scorer_id}", name="scorer_update_submit")
def update_scorer(
    request: Request,
    scorer: WebScorerDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save a scorer, or try the edited version on a query (the 'Try' button)."""
    values = {name: field_text(form, name) for name in EDITOR_FIELDS}
    values["kind"] = scorer.kind
    data = scorer_pages.scorer_page(session=session, user=user, scorer=scorer)
    try:
        if field_text(form, "action") == "try":
            outcome = _try(session, user, values, form)
            return _editor(request, user, data, values, outcome=outcome)
        body = parse_body(ScorerUpdate, _scorer_values(values, with_kind=False))
        scorer_service.update_scorer(session=session, scorer=scorer, body=body)
    except (FormErrors, Invalid) as exc:
        session.rollback()
        return _editor(request, user, data, values, errors=_errors(exc), status_code=422)
    return RedirectResponse(
        str(request.url_for("scorer_page", scorer_id=scorer.id)), status_code=303
    )


def _editor(
    request: Request,
    user: User,
    data: ScorerPage,
    values: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    outcome: TryOutcome | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "user": user,
        "page": data,
        "form": values,
        "errors": errors or {},
        "outcome": outcome,
        "kinds": KINDS,
    }
    return render(request, "scorer.html", context, status_code=status_code)


def _errors(exc: FormErrors | Invalid) -> dict[str, str]:
    return {
        ("labels" if k.startswith("scale_labels") else k.split(".")[0]): v
        for k, v in form_errors(exc).items()
    }


def _values_of(scorer: ScorerRead) -> dict[str, str]:
    return {
        "name": scorer.name,
        "kind": scorer.kind,
        "code": scorer.code or "",
        "params": "\n".join(f"{k}={v}" for k, v in scorer.params.items()),
        "scale": ", ".join(f"{v:g}" for v in scorer.scale),
        "labels": "\n".join(f"{k}={v}" for k, v in (scorer.scale_labels or {}).items()),
        "max_score": f"{scorer.max_score:g}",
    }


def _scorer_values(values: dict[str, str], *, with_kind: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": values["name"],
        "code": values["code"] or None,
        "params": _params(values["params"]),
        "scale": _scale(values["scale"]),
        "scale_labels": _labels(values["labels"]),
        "max_score": _max_score(values["max_score"]),
    }
    if with_kind:
        result["kind"] = values["kind"]
    return result


def _params(text: str) -> dict[str, Any] | None:
    params: dict[str, Any] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, raw = line.partition("=")
        if not sep or not key.strip():
            raise FormErrors({"params": f"Write one 'name=value' per line, not {line!r}."})
        params[key.strip()] = _number_or_text(raw.strip())
    return params or None


def _max_score(text: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise FormErrors({"max_score": "Write the maximum score as a number."}) from exc


def _number_or_text(raw: str) -> Any:
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            continue
    return raw


def _scale(text: str) -> list[Any]:
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    try:
        return [float(p) for p in parts]
    except ValueError as exc:
        raise FormErrors({"scale": "Write the scale as numbers, e.g. '0, 1, 2, 3'."}) from exc


def _labels(text: str) -> dict[str, str] | None:
    labels: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, label = line.partition("=")
        if not sep:
            raise FormErrors({"labels": f"Write one 'value=label' per line, not {line!r}."})
        labels[key.strip()] = label.strip()
    return labels or None


def _try(session: SessionDep, user: User, values: dict[str, str], form: FormData) -> TryOutcome:
    """Score the chosen query with the editor's (maybe unsaved) scorer."""
    spec = _scorer_values(values, with_kind=True)
    del spec["name"]  # trying needs no name; the config is all that counts
    config = scorer_service.build_config(**spec)
    raw_id = field_text(form, "try_query_id")
    if not raw_id.isdigit():
        raise FormErrors({"try_query_id": "Choose a query to try the scorer on."})
    query = session.get(Query, int(raw_id)) if access.valid_id(int(raw_id)) else None
    try:
        case = access.visible_case(
            session=session, user=user, case_id=query.case_id if query else 0
        )
    except NotFound:
        # Name only what the user sent: another user's case id must not show through.
        raise NotFound(f"No query with id {raw_id}.") from None
    assert query is not None
    return scorer_pages.try_scorer(session=session, config=config, case=case, query=query)

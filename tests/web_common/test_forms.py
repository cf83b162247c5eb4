"""The page forms: every error at once, in the user's words, next to its field; nothing
written when a form is refused; "Saved" after a save; the scorer form's kinds; the endpoint
warning when its URL does not answer."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case, Query, Scorer, SearchEndpoint
from app.web_common.forms import friendly_message, parse_body
from tests.fixtures.users import ApiUser
from tests.support.pages import attr, login, movies_case, one, scorer_id, soup


def _errors(page: BeautifulSoup) -> dict[str, str]:
    return {attr(p, "data-field"): p.get_text(strip=True) for p in page.select("p.field-error")}


def _under_fields(page: BeautifulSoup, form: str) -> dict[str, str]:
    """Return each message by the field it sits under: the control and the message share
    one cell of the form's grid, and the control points at the message."""
    found: dict[str, str] = {}
    for cell in page.select(f"{form} .field:has(p.field-error)"):
        control = one(cell, "[name]")
        message = one(cell, "p.field-error")
        assert control.get("aria-describedby") == message.get("id")
        found[attr(control, "name")] = message.get_text(strip=True)
    return found


def _invalid_fields(page: BeautifulSoup, form: str) -> set[str]:
    return {
        attr(tag, "name")
        for tag in page.select(f"{form} [aria-invalid=true]")
        if tag.get("aria-describedby") == f"error-{tag['name']}"
    }


def _count(factory: sessionmaker[Session], model: Any) -> int:
    with session_scope(factory) as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed without listen(): connecting is refused


def test_new_case_form_shows_every_error_in_words_and_creates_nothing(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    movies_case(api)  # one endpoint to pick, which the form leaves unpicked
    token = login(client)
    before = _count(session_factory, Case)
    response = client.post(
        "/cases",
        data={
            "csrf_token": token,
            "name": "   ",
            "search_endpoint_id": "",
            "query_template": "",
            "field_spec": "id:_id title",
            "rows": "0",
        },
    )
    assert response.status_code == 422
    page = soup(response)
    assert _errors(page) == {
        "name": "Name is required.",
        "search_endpoint_id": "Pick a search endpoint.",
        "query_template": "Query template is required.",  # no endpoint, so no engine default
        "rows": "Rows must be a whole number from 1 to 500.",
    }
    summary = [li.get_text(strip=True) for li in page.select(".form-errors li")]
    assert summary == list(_errors(page).values())
    assert _invalid_fields(page, "#new-case-form") == {
        "name",
        "search_endpoint_id",
        "query_template",
        "rows",
    }
    assert one(page, "input[name=field_spec]")["value"] == "id:_id title"
    assert _count(session_factory, Case) == before


BROKEN_TEMPLATE = '{"query": {"match": {"title": "#$query##"}'  # one brace short
TEMPLATE_ERROR = (
    "Template is not valid JSON after rendering: Expecting ',' delimiter at line 1, "
    """column 38: '{"query": {"match": {"title": "test"}'"""
)
FIELD_SPEC_ERROR = (
    "Field spec token 'wat:title': unknown prefix 'wat'; "
    "use one of id:, title:, thumb:, image: or a bare field name"
)


def test_new_case_form_checks_the_template_beside_the_other_fields(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    movies_case(api)
    token = login(client)
    endpoint = one(soup(client.get("/")), "#new-case-form select[name=search_endpoint_id] option")
    before = _count(session_factory, Case)
    response = client.post(
        "/cases",
        data={
            "csrf_token": token,
            "name": "",
            "search_endpoint_id": attr(endpoint, "value"),
            "query_template": BROKEN_TEMPLATE,
            "field_spec": "id:_id wat:title",
            "rows": "0",
            "scorer_id": "999999",
        },
    )
    assert response.status_code == 422
    page = soup(response)
    expected = {
        "name": "Name is required.",
        "query_template": TEMPLATE_ERROR,
        "field_spec": FIELD_SPEC_ERROR,
        "rows": "Rows must be a whole number from 1 to 500.",
        "scorer_id": "Pick a scorer from the list.",
    }
    assert _under_fields(page, "#new-case-form") == expected
    summary = [li.get_text(strip=True) for li in page.select("#new-case .form-errors li")]
    assert summary == list(expected.values())  # in the order of the fields on the page
    assert one(page, "textarea[name=query_template]").get_text() == BROKEN_TEMPLATE
    assert attr(one(page, "#new-case-form"), "action").endswith("/cases#new-case")
    assert _count(session_factory, Case) == before


def test_settings_errors_come_all_at_once_and_change_nothing(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    token = login(client)
    form = one(soup(client.get(f"/cases/{case_id}")), "#settings-form")
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {
        "csrf_token": token,
        "search_endpoint_id": str(one(form, "select[name=search_endpoint_id] option")["value"]),
        "scorer_id": str(scorer_id(api, "NDCG@10")),
        "query_template": BROKEN_TEMPLATE,
        "field_spec": "id:_id wat:title",
        "knob.titleBoost": "lots",
        "rows": "9999",
        "name": "",
    }
    response = client.post(f"/cases/{case_id}/settings", data=values)
    assert response.status_code == 422
    page = soup(response)
    # Every field is checked on its own: the template and the field spec are reported
    # beside the other problems, not only once the rest is right.
    assert _errors(page) == {
        "name": "Name is required.",
        "query_template": TEMPLATE_ERROR,
        "knobs": "Knob titleBoost must be a number from 0 to 1,000,000,000, not 'lots'.",
        "field_spec": FIELD_SPEC_ERROR,
        "rows": "Rows must be a whole number from 1 to 500.",
    }
    assert _under_fields(page, "#settings-form") == {
        "name": "Name is required.",
        "query_template": TEMPLATE_ERROR,
        "field_spec": FIELD_SPEC_ERROR,
        "rows": "Rows must be a whole number from 1 to 500.",
    }
    knobs_error = one(page, "#settings-form fieldset.knobs p.field-error")
    assert (
        knobs_error.get_text()
        == "Knob titleBoost must be a number from 0 to 1,000,000,000, not 'lots'."
    )
    summary = [li.get_text(strip=True) for li in page.select("#settings .form-errors li")]
    assert summary == list(_errors(page).values())  # in the order of the fields on the page
    assert one(page, "#settings-form input[name='knob.titleBoost']")["value"] == "lots"
    assert attr(one(page, "#settings-form"), "action").endswith(
        f"/cases/{case_id}/settings#settings"
    )
    # Nothing was written: not the name, not the scorer, no new try.
    case = api.get(f"/api/v1/cases/{case_id}").json()
    assert case["name"] == "Movies" and case["try_number"] == 1
    assert case["scorer_id"] != scorer_id(api, "NDCG@10")


def test_saved_settings_say_so(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api)
    token = login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    assert page.select_one("#settings-saved") is None
    form = one(page, "#settings-form")
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {
        "csrf_token": token,
        "name": "Renamed",
        "query_template": one(form, "textarea[name=query_template]").get_text(),
        "search_endpoint_id": str(one(form, "select[name=search_endpoint_id] option")["value"]),
    }
    saved = client.post(f"/cases/{case_id}/settings", data=values, follow_redirects=False)
    assert saved.status_code == 303
    # The fragment scrolls to the notice, which sits beside the settings' heading.
    assert saved.headers["location"].endswith(f"/cases/{case_id}?saved=settings#settings-saved")
    shown = one(
        soup(client.get(saved.headers["location"])), "#settings .section-head #settings-saved"
    )
    assert (shown.get_text(), shown["role"]) == ("Settings saved.", "status")


def test_an_empty_query_list_says_so(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    token = login(client)
    empty = client.post(
        f"/cases/{case_id}/queries", data={"csrf_token": token, "queries": "\n  \n"}
    )
    assert empty.status_code == 422
    page = soup(empty)
    assert _errors(page) == {"queries": "Type at least one query, one per line."}
    assert one(page, "textarea[name=queries]")["aria-describedby"] == "error-queries"
    assert one(page, "details.add-queries").has_attr("open")
    assert _count(session_factory, Query) == 0
    added = client.post(
        f"/cases/{case_id}/queries",
        data={"csrf_token": token, "queries": "alien\n"},
        follow_redirects=False,
    )
    assert added.headers["location"].endswith("?saved=queries#queries-saved")
    page = soup(client.get(added.headers["location"]))
    assert one(page, "#queries-saved").get_text() == "Queries added."
    assert _count(session_factory, Query) == 1


def _scorer_form(client: TestClient) -> dict[str, str]:
    form = one(soup(client.get("/scorers/new")), "#scorer-form")
    values = {str(i["name"]): str(i.get("value", "")) for i in form.select("input[name]")}
    values |= {str(t["name"]): t.get_text() for t in form.select("textarea[name]")}
    return values


def test_scorer_form_errors_in_words(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    token = login(client)
    before = _count(session_factory, Scorer)
    response = client.post(
        "/scorers",
        data={
            **_scorer_form(client),
            "csrf_token": token,
            "kind": "javascript",
            "name": "",
            "scale": "0, lots",
            "max_score": "many",
            "action": "save",
        },
    )
    assert response.status_code == 422
    assert _errors(soup(response)) == {
        "name": "Name is required.",
        "scale": "Write the scale as numbers, e.g. '0, 1, 2, 3'.",
        "max_score": "Max score must be a number, e.g. 100.",
    }
    assert _count(session_factory, Scorer) == before


def test_a_filled_scale_is_not_required_beside_other_errors(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    token = login(client)
    base = {**_scorer_form(client), "csrf_token": token, "action": "save"}
    before = _count(session_factory, Scorer)
    javascript = client.post(
        "/scorers",
        data={**base, "kind": "javascript", "name": "", "scale": "0, 1, 2", "max_score": "many"},
    )
    assert javascript.status_code == 422
    page = soup(javascript)
    assert _under_fields(page, "#scorer-form") == {
        "name": "Name is required.",
        "max_score": "Max score must be a number, e.g. 100.",
    }
    assert one(page, "input[name=scale]")["value"] == "0, 1, 2"
    assert "Scale is required." not in page.get_text()  # it was, beside the filled scale

    built_in = client.post(
        "/scorers",
        data={**base, "kind": "ndcg", "name": "Mine", "params": "k", "scale": "0, 1",
              "labels": "0 Poor"},
    )  # fmt: skip
    assert built_in.status_code == 422
    assert _under_fields(soup(built_in), "#scorer-form") == {
        "params": "Write one 'name=value' per line, not 'k'.",
        "labels": "Write one 'value=label' per line, not '0 Poor'.",
    }
    assert _count(session_factory, Scorer) == before


def test_built_in_kinds_ignore_code_and_javascript_keeps_its_environment(
    api: ApiUser, client: TestClient
) -> None:
    token = login(client)
    page = soup(client.get("/scorers/new"))
    ndcg = one(page, "select[name=kind] option[value=ndcg]")
    assert (ndcg["data-scale"], ndcg["data-labels"]) == (
        "0, 1, 2, 3",
        "0=Poor\n1=Fair\n2=Good\n3=Perfect",
    )
    assert one(page, "select[name=kind] option[value=classic]")["data-scale"] == ", ".join(
        str(n) for n in range(1, 11)
    )
    assert one(page, "select[name=kind] option[value=precision]")["data-scale"] == "0, 1"
    # The page opens on JavaScript: code, max score and environment show, parameters do not.
    assert not one(page, ".field:has(textarea[name=code])").has_attr("hidden")
    assert one(page, ".field:has(textarea[name=params])").has_attr("hidden")

    base = {**_scorer_form(client), "csrf_token": token, "action": "save"}
    built_in = client.post(
        "/scorers",
        data={**base, "name": "My NDCG", "kind": "ndcg", "code": "this is not code",
              "params": "k=5", "scale": "", "scale_preset": "graded", "environment": "quepid"},
        follow_redirects=False,
    )  # fmt: skip
    assert built_in.status_code == 303, built_in.text
    saved = soup(client.get(built_in.headers["location"]))
    assert one(saved, "#saved").get_text() == "Saved."
    scorers = {s["name"]: s for s in api.get("/api/v1/scorers").json()}
    mine = scorers["My NDCG"]
    assert (mine["kind"], mine["code"], mine["params"]["k"]) == ("ndcg", None, 5)
    assert mine["scale"] == [0, 1, 2, 3] and mine["scale_labels"]["3"] == "Perfect"
    assert mine["environment"] == "relevo"  # an environment is for JavaScript only

    quepid = client.post(
        "/scorers",
        data={**base, "name": "Like Quepid", "kind": "javascript", "environment": "quepid",
              "params": "k=oops", "scale_preset": "binary"},
        follow_redirects=False,
    )  # fmt: skip
    assert quepid.status_code == 303, quepid.text
    mine = {s["name"]: s for s in api.get("/api/v1/scorers").json()}["Like Quepid"]
    assert (mine["environment"], mine["params"], mine["scale"]) == ("quepid", {}, [0, 1])
    shown = soup(client.get(quepid.headers["location"]))
    assert one(shown, "select[name=environment] option[selected]")["value"] == "quepid"


def test_endpoint_form_errors_and_the_warning_when_the_url_does_not_answer(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session], movies_engine: Any
) -> None:
    token = login(client)
    bad = client.post(
        "/endpoints",
        data={"csrf_token": token, "name": "", "engine": "opensearch", "url": "ftp://x.example",
              "method": "GET", "timeout_s": "10", "requests_per_minute": "-1",
              "max_concurrency": "0", "headers": "no colon here"},
    )  # fmt: skip
    assert bad.status_code == 422
    assert _errors(soup(bad)) == {
        "name": "Name is required.",
        "url": "URL must be an http:// or https:// URL.",
        "requests_per_minute": "Requests per minute must be a whole number from 0 to 100,000.",
        "max_concurrency": "Max concurrency must be a whole number from 1 to 64.",
        "headers": "Write one 'Name: value' per line, not 'no colon here'.",
    }
    assert _count(session_factory, SearchEndpoint) == 0

    down = f"http://127.0.0.1:{_closed_port()}/movies"
    created = client.post(
        "/endpoints",
        data={"csrf_token": token, "name": "Down", "engine": "opensearch", "url": down,
              "method": "GET", "timeout_s": "10", "requests_per_minute": "0",
              "max_concurrency": "8"},
        follow_redirects=False,
    )  # fmt: skip
    assert created.status_code == 303 and created.headers["location"].endswith("?saved=1")
    page = soup(client.get(created.headers["location"]))
    assert one(page, "#saved").get_text() == "Saved."
    warning = one(page, "#save-warning").get_text()
    assert warning.startswith(f"The endpoint is saved, but a test query to {down} failed:")
    assert _count(session_factory, SearchEndpoint) == 1

    up = client.post(
        "/endpoints",
        data={"csrf_token": token, "name": "Up", "engine": "opensearch",
              "url": movies_engine.index_url, "method": "GET", "timeout_s": "10",
              "requests_per_minute": "0", "max_concurrency": "8"},
        follow_redirects=False,
    )  # fmt: skip
    page = soup(client.get(up.headers["location"]))
    assert one(page, "#saved").get_text() == "Saved."
    assert page.select_one("#save-warning") is None
    # Only right after a save: opening the page later calls no engine.
    plain = soup(client.get(created.headers["location"].removesuffix("?saved=1")))
    assert plain.select_one("#saved") is None and plain.select_one("#save-warning") is None


class _Sample(BaseModel):
    name: str = Field(min_length=1, max_length=5)
    rows: int = Field(ge=1, le=500)
    ratio: float = Field(gt=0)
    count: int


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"name": "", "rows": 1, "ratio": 1, "count": 1}, {"name": "Name is required."}),
        (
            {"name": "toolong", "rows": 1, "ratio": 1, "count": 1},
            {"name": "Name can be at most 5 characters long."},
        ),
        (
            {"name": "a", "rows": "ten", "ratio": "x", "count": 1.5},
            {
                "rows": "Rows must be a whole number from 1 to 500.",
                "ratio": "Ratio must be a number more than 0.",
                "count": "How many must be a whole number.",
            },
        ),
        ({"rows": 501, "ratio": 0, "count": 1}, {
            "name": "Name is required.",
            "rows": "Rows must be a whole number from 1 to 500.",
            "ratio": "Ratio must be a number more than 0.",
        }),
    ],
)  # fmt: skip
def test_validation_errors_read_as_sentences(
    values: dict[str, Any], expected: dict[str, str]
) -> None:
    from app.web_common.forms import FormErrors

    with pytest.raises(FormErrors) as raised:
        parse_body(_Sample, values, {"count": "How many"})
    assert raised.value.errors == expected


def test_a_validator_message_is_prefixed_with_its_field() -> None:
    class Url(BaseModel):
        url: str

        @classmethod
        def __get_pydantic_json_schema__(cls, *args: Any) -> Any:  # pragma: no cover
            raise NotImplementedError

    with pytest.raises(ValidationError) as raised:
        Url.model_validate({})
    (error,) = raised.value.errors()
    assert friendly_message("URL", error) == "URL is required."
    custom = {**error, "type": "value_error", "msg": "Value error, must be an http:// URL"}
    assert friendly_message("URL", custom) == "URL must be an http:// URL."  # type: ignore[arg-type]
    sentence = {**error, "type": "value_error", "msg": "Value error, Something is off."}
    assert friendly_message("URL", sentence) == "Something is off."  # type: ignore[arg-type]

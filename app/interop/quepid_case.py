"""Quepid case exports in and out: a Quepid case JSON becomes a Relevo case, and back.

Quepid's case export (its `export/cases` views) is one JSON object::

    {"case_name", "options", "scorer": {"name"}, "queries": [{"query_text", "notes",
     "information_need", "options", "ratings": [{"doc_id", "rating", "user_email"}]}],
     "try": {"query_params", "field_spec", "number_of_rows", "escape_query",
             "curator_variables": [{"name", "value"}],
             "search_endpoint": {"endpoint_url", "search_engine", "api_method",
                                 "custom_headers", "basic_auth_credential", ...}}}

Older Quepid versions put `search_url`, `search_engine`, `api_method` and `custom_headers`
on the try itself, wrote curator variables as a `curator_vars` object (name → value) and
ratings as an object (doc id → rating), and gave the scorer's `code` and `scale`; all of
these are read too. Quepid's own import endpoint takes the export wrapped as `{"case": …}`;
that wrapping is accepted as well.

An import is one transaction: the endpoint (reused when the user has one with the same
engine and URL), the scorer (reused when the user has an identical one), the case, its try,
queries and ratings are all written, or nothing is.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.access import visible_clause
from app.cases import service as case_service
from app.cases.bulk_lines import from_options
from app.db import owns_transaction
from app.endpoints import service as endpoint_service
from app.endpoints.service import TEST_FIELD_SPECS
from app.errors import Invalid
from app.models import Case, Query, Rating, Scorer, SearchEndpoint, Try, User
from app.models.base import utcnow
from app.scorers import service as scorer_service
from app.scoring.quepid_scorers import ShippedScorer, shipped_scorer
from app.search import FieldSpecError, extract_knobs, parse_field_spec
from app.vocabulary import Engine, HttpMethod, ScorerKind

__all__ = [
    "ImportedCase",
    "QuepidCase",
    "check_endpoint",
    "export_case",
    "import_case",
    "parse_case",
    "quepid_scorer_name",
]

QUEPID_ENVIRONMENT = "quepid"
# Imported Quepid scorers are named "AP@10 (Quepid)", so they are not taken for the built-in
# presets of the same name (which compute other numbers). Before, they were named as in
# Quepid ("AP@10"); a scorer imported under that name is still found and reused.
QUEPID_SUFFIX = " (Quepid)"
# How long the import waits for the endpoint's engine to answer one query.
REACH_TIMEOUT_S = 3.0
ENVIRONMENTS = ("relevo", QUEPID_ENVIRONMENT)
MAX_QUERY_CHARS = 1000
MAX_DOC_ID_CHARS = 500
MAX_NAME_CHARS = 200
MAX_ROWS = 500
READ_BATCH = 5000

# Quepid's search_engine values and the engine Relevo searches them with.
ENGINES: dict[str, Engine] = {
    "solr": Engine.SOLR,
    "es": Engine.ELASTICSEARCH,
    "elasticsearch": Engine.ELASTICSEARCH,
    "os": Engine.OPENSEARCH,
    "opensearch": Engine.OPENSEARCH,
    "searchapi": Engine.SEARCHAPI,
    "vespa": Engine.VESPA,
    "static": Engine.STATIC,
}
QUEPID_ENGINE_NAMES: dict[Engine, str] = {
    Engine.SOLR: "solr",
    Engine.ELASTICSEARCH: "es",
    Engine.OPENSEARCH: "os",
    Engine.SEARCHAPI: "searchapi",
    Engine.VESPA: "vespa",
    Engine.STATIC: "static",
}
# Quepid field spec prefixes Relevo shows as plain fields (Relevo has no media or
# translation links); `id`, `title`, `thumb` and `image` mean the same in both.
PLAIN_PREFIXES = ("sub", "media", "translate", "link")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

Loc = tuple[str | int, ...]


# ----------------------------------------------------------------------------- parsing


@dataclass
class QuepidQuery:
    """One query of the export, with its ratings (doc id → rating)."""

    text: str
    notes: str | None
    information_need: str | None
    options: dict[str, Any]
    ratings: dict[str, float]


@dataclass
class QuepidEndpoint:
    """Where the export's try searched."""

    name: str | None
    engine: Engine
    url: str
    method: HttpMethod
    headers: dict[str, str]
    basic_auth: str | None
    requests_per_minute: int
    # searchapi: the endpoint's docsMapper/numberOfResultsMapper code, carried unchanged.
    mapper_code: str | None = None


@dataclass
class QuepidScorer:
    """The export's scorer: usually its name only; older exports also give code and scale."""

    name: str
    code: str | None
    scale: list[float] | None
    max_score: float | None = None  # written by Relevo's export only
    environment: str | None = None  # likewise


@dataclass
class QuepidCase:
    """A Quepid case export, checked and put in Relevo's terms."""

    name: str
    options: dict[str, Any]
    scorer: QuepidScorer
    queries: list[QuepidQuery]
    query_template: str
    field_spec: str
    rows: int
    curator_variables: dict[str, Any]
    endpoint: QuepidEndpoint
    warnings: list[str] = field(default_factory=list)


def _path(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _missing(loc: Loc) -> Invalid:
    return Invalid(loc, f'This is not a Quepid case export: "{_path(loc)}" is missing.')


def _wrong(loc: Loc, expected: str) -> Invalid:
    return Invalid(loc, f'"{_path(loc)}" must be {expected} in a Quepid case export.')


def _object(data: Any, loc: Loc) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _wrong(loc, "an object")
    return data


def _required(data: Mapping[str, Any], key: str, loc: Loc) -> Any:
    if key not in data or data[key] is None:
        raise _missing((*loc, key))
    return data[key]


def _text(value: Any, loc: Loc, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _wrong(loc, "text")
    return str(value)


def _json_object(value: Any, loc: Loc) -> dict[str, Any]:
    """Return Quepid options: an object, null, or (older versions) an object as JSON text."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise _wrong(loc, "a JSON object") from exc
    if not isinstance(value, dict):
        raise _wrong(loc, "a JSON object")
    return value


def _number(value: Any, loc: Loc) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError as exc:
            raise _wrong(loc, "a number") from exc
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _wrong(loc, "a number")
    return float(value)


def _clean_text(value: Any, loc: Loc) -> None:
    """Refuse what PostgreSQL cannot store: NUL characters and unpaired surrogates."""
    if isinstance(value, str):
        if "\x00" in value or _LONE_SURROGATE.search(value):
            raise Invalid(loc, f'"{_path(loc)}" contains a NUL character or an unpaired surrogate.')
    elif isinstance(value, dict):
        for key, item in value.items():
            _clean_text(key, loc)
            _clean_text(item, (*loc, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _clean_text(item, (*loc, index))


def decode(raw: bytes) -> Any:
    """Return the JSON value of an uploaded file, or 422 saying why it is not JSON."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Invalid((), f"The file is not UTF-8 text (byte {exc.start}).") from exc
    if not text.strip():
        raise Invalid((), "The file is empty; export the case from Quepid and upload that file.")

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise Invalid(
            (), f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise Invalid((), f"The file is not valid JSON: {exc}.") from exc


def parse_case(data: Any) -> QuepidCase:
    """Return the export as a QuepidCase; 422 naming the first missing or wrong key."""
    if isinstance(data, dict) and "case_name" not in data and isinstance(data.get("case"), dict):
        data = data["case"]  # the body of Quepid's own import endpoint
    if not isinstance(data, dict):
        raise Invalid((), "This is not a Quepid case export: the file must hold a JSON object.")
    _clean_text(data, ())
    name = _text(_required(data, "case_name", ()), ("case_name",))
    assert name is not None
    name = name.strip()
    if not name:
        raise _missing(("case_name",))
    scorer = _scorer(_object(_required(data, "scorer", ()), ("scorer",)))
    queries_raw = _required(data, "queries", ())
    if not isinstance(queries_raw, list):
        raise _wrong(("queries",), "a list")
    the_try = _object(_required(data, "try", ()), ("try",))
    template = _text(_required(the_try, "query_params", ("try",)), ("try", "query_params"))
    assert template is not None
    endpoint = _endpoint(the_try)
    warnings: list[str] = []
    queries = _queries(queries_raw, warnings)
    options = _json_object(data.get("options"), ("options",))
    endpoint_options = the_try.get("search_endpoint")
    if isinstance(endpoint_options, dict) and endpoint_options.get("options"):
        # Quepid reads qOption values from the case's options merged with the endpoint's.
        options = {**options, **_json_object(endpoint_options["options"], ("try", "options"))}
    field_spec = _field_spec(the_try.get("field_spec"), endpoint.engine, warnings)
    rows = _rows(the_try.get("number_of_rows"), warnings)
    if len(name) > MAX_NAME_CHARS:
        warnings.append(f"The case name was cut to {MAX_NAME_CHARS} characters.")
        name = name[:MAX_NAME_CHARS].rstrip()
    return QuepidCase(
        name=name,
        options=options,
        scorer=scorer,
        queries=queries,
        query_template=template,
        field_spec=field_spec,
        rows=rows,
        curator_variables=_curator_variables(the_try),
        endpoint=endpoint,
        warnings=warnings,
    )


def _scorer(data: dict[str, Any]) -> QuepidScorer:
    name = _text(_required(data, "name", ("scorer",)), ("scorer", "name"))
    assert name is not None
    if not name.strip():
        raise _missing(("scorer", "name"))
    code = _text(data.get("code"), ("scorer", "code"), optional=True)
    scale: list[float] | None = None
    raw_scale = data.get("scale")
    if isinstance(raw_scale, str):  # "0, 1, 2, 3", as Quepid stores it
        raw_scale = [part for part in re.split(r"[\s,\[\]]+", raw_scale) if part]
    if raw_scale is not None and raw_scale != []:
        if not isinstance(raw_scale, list):
            raise _wrong(("scorer", "scale"), "a list of numbers")
        scale = [_number(v, ("scorer", "scale", i)) for i, v in enumerate(raw_scale)]
    code = code if code and code.strip() else None
    max_score = data.get("max_score")
    environment = data.get("environment")
    if environment is not None and environment not in ENVIRONMENTS:
        raise _wrong(("scorer", "environment"), '"relevo" or "quepid"')
    return QuepidScorer(
        name=name.strip(),
        code=code,
        scale=scale,
        max_score=None if max_score is None else _number(max_score, ("scorer", "max_score")),
        environment=environment,
    )


def _endpoint(the_try: dict[str, Any]) -> QuepidEndpoint:
    """Return the search endpoint: `try.search_endpoint` (Quepid 7.10 on) or the try's own keys."""
    nested = the_try.get("search_endpoint")
    if nested is not None:
        source = _object(nested, ("try", "search_endpoint"))
        loc: Loc = ("try", "search_endpoint")
        url_key = "endpoint_url"
    elif "search_url" in the_try:
        source, loc, url_key = the_try, ("try",), "search_url"
    else:
        raise _missing(("try", "search_endpoint"))
    quepid_engine = _text(_required(source, "search_engine", loc), (*loc, "search_engine"))
    assert quepid_engine is not None
    engine = ENGINES.get(quepid_engine.strip().lower())
    if engine is None:
        raise Invalid(
            (*loc, "search_engine"),
            "Relevo searches Solr, Elasticsearch, OpenSearch, Vespa, search APIs and result "
            f'files; this case uses a "{quepid_engine}" endpoint, which Relevo cannot search.',
        )
    if engine == Engine.STATIC:  # a result file: whatever URL Quepid kept is not called
        return _static_endpoint(source, nested is not None)
    url = _text(_required(source, url_key, loc), (*loc, url_key))
    assert url is not None
    url = _index_url(url.strip(), engine, (*loc, url_key))
    mapper_code = None
    if engine == Engine.SEARCHAPI:
        mapper_loc = (*loc, "mapper_code")
        mapper_code = _text(_required(source, "mapper_code", loc), mapper_loc)
        if not mapper_code or not mapper_code.strip():
            raise _wrong(mapper_loc, "JavaScript defining docsMapper(data)")
    method = str(source.get("api_method") or "GET").upper()
    headers = _headers(source.get("custom_headers"), (*loc, "custom_headers"))
    auth_loc = (*loc, "basic_auth_credential")
    auth = _text(source.get("basic_auth_credential"), auth_loc, optional=True)
    if auth and ":" not in auth:
        raise _wrong(auth_loc, '"user:password"')
    parsed = httpx.URL(url)
    if parsed.userinfo:  # credentials in the URL become basic auth, as for any endpoint
        url = str(parsed.copy_with(username=None, password=None))
        auth = auth or f"{parsed.username}:{parsed.password}"
    per_minute = source.get("requests_per_minute")
    name = source.get("name") if nested is not None else None
    return QuepidEndpoint(
        name=name.strip()[:MAX_NAME_CHARS] if isinstance(name, str) and name.strip() else None,
        engine=engine,
        url=url,
        # Quepid's JSONP is a GET request; Relevo sends Elasticsearch bodies by POST anyway.
        method=HttpMethod.POST if method == "POST" else HttpMethod.GET,
        headers=headers,
        basic_auth=auth or None,
        requests_per_minute=per_minute
        if isinstance(per_minute, int) and not isinstance(per_minute, bool) and per_minute > 0
        else 0,
        mapper_code=mapper_code,
    )


def _static_endpoint(source: dict[str, Any], nested: bool) -> QuepidEndpoint:
    """Return a result-file endpoint: no URL, no secrets; its file is uploaded in Relevo."""
    name = source.get("name") if nested else None
    return QuepidEndpoint(
        name=name.strip()[:MAX_NAME_CHARS] if isinstance(name, str) and name.strip() else None,
        engine=Engine.STATIC,
        url="",
        method=HttpMethod.GET,
        headers={},
        basic_auth=None,
        requests_per_minute=0,
    )


def _index_url(url: str, engine: Engine, loc: Loc) -> str:
    """Return Relevo's endpoint URL: Quepid's Elasticsearch/OpenSearch URL ends in /_search."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise _wrong(loc, "an http:// or https:// URL") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise _wrong(loc, "an http:// or https:// URL")
    if engine != Engine.SOLR:
        path = parsed.raw_path.decode("ascii").partition("?")[0].rstrip("/")
        if path.endswith("/_search"):
            trimmed = path[: -len("/_search")]
            query = parsed.query.decode("ascii")
            raw_path = trimmed + (f"?{query}" if query else "")
            url = str(parsed.copy_with(raw_path=raw_path.encode()))
    return url.rstrip("/")


def _headers(value: Any, loc: Loc) -> dict[str, str]:
    """Return Quepid's custom headers (an object, or an object as JSON text)."""
    headers = _json_object(value, loc)
    result: dict[str, str] = {}
    for name, header in headers.items():
        if isinstance(header, dict | list) or header is None:
            raise _wrong((*loc, name), "text")
        result[str(name)] = str(header)
    return result


def _queries(items: list[Any], warnings: list[str]) -> list[QuepidQuery]:
    by_text: dict[str, QuepidQuery] = {}
    repeated = 0
    for index, item in enumerate(items):
        loc: Loc = ("queries", index)
        query = _object(item, loc)
        text = _text(_required(query, "query_text", loc), (*loc, "query_text"))
        assert text is not None
        text = text.strip()
        if not text:
            raise Invalid((*loc, "query_text"), f'"{_path((*loc, "query_text"))}" is empty.')
        if len(text) > MAX_QUERY_CHARS:
            raise Invalid(
                (*loc, "query_text"),
                f"Query {index + 1} is longer than {MAX_QUERY_CHARS} characters, "
                "the longest query Relevo keeps.",
            )
        ratings = _ratings(query.get("ratings"), (*loc, "ratings"))
        notes = _text(query.get("notes"), (*loc, "notes"), optional=True)
        need = _text(query.get("information_need"), (*loc, "information_need"), optional=True)
        options = _json_object(query.get("options"), (*loc, "options"))
        if text in by_text:
            repeated += 1
            earlier = by_text[text]
            earlier.ratings.update(ratings)
            earlier.notes = notes or earlier.notes
            earlier.information_need = need or earlier.information_need
            earlier.options = {**earlier.options, **options}
            continue
        by_text[text] = QuepidQuery(text, notes or None, need or None, options, ratings)
    if repeated:
        warnings.append(
            f"{repeated} queries repeat the text of an earlier one: each was merged into the "
            "first (its ratings win over the earlier ones for the same document)."
        )
    return list(by_text.values())


def _ratings(value: Any, loc: Loc) -> dict[str, float]:
    """Return doc id → rating from a list of {doc_id, rating} or an object doc id → rating."""
    if value is None:
        return {}
    if isinstance(value, dict):
        pairs: Iterator[tuple[Any, Any, Loc]] = (
            (doc, rating, (*loc, str(doc))) for doc, rating in value.items()
        )
    elif isinstance(value, list):
        pairs = (_rating_pair(item, (*loc, i)) for i, item in enumerate(value))
    else:
        raise _wrong(loc, "a list of ratings")
    ratings: dict[str, float] = {}
    for doc, rating, where in pairs:
        doc_id = _text(doc, (*where, "doc_id"))
        assert doc_id is not None
        if not doc_id or len(doc_id) > MAX_DOC_ID_CHARS:
            raise Invalid(
                (*where, "doc_id"), f"A doc id must have 1 to {MAX_DOC_ID_CHARS} characters."
            )
        if rating is None or rating == "":
            continue  # Quepid keeps "not rated yet" as a null rating
        ratings[doc_id] = _number(rating, (*where, "rating"))
    return ratings


def _rating_pair(item: Any, loc: Loc) -> tuple[Any, Any, Loc]:
    rating = _object(item, loc)
    return _required(rating, "doc_id", loc), rating.get("rating"), loc


def _curator_variables(the_try: dict[str, Any]) -> dict[str, Any]:
    """Return name → value: `curator_variables` [{name, value}] or `curator_vars` {name: value}."""
    found: dict[str, Any] = {}
    listed = the_try.get("curator_variables")
    if isinstance(listed, list):
        for item in listed:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                found[item["name"]] = item.get("value")
    mapped = the_try.get("curator_vars")
    if isinstance(mapped, dict):
        found.update({str(k): v for k, v in mapped.items()})
    return found


def _field_spec(value: Any, engine: Engine, warnings: list[str]) -> str:
    """Return the field spec in Relevo's terms (`sub:`, `media:`… become plain fields)."""
    text = _text(value, ("try", "field_spec"), optional=True)
    if text is None or not text.strip():
        return TEST_FIELD_SPECS[engine]
    tokens: list[str] = []
    dropped: list[str] = []
    for token in re.split(r"[\s,]+", text.strip()):
        if not token:
            continue
        prefix, sep, name = token.partition(":")
        if sep and prefix in PLAIN_PREFIXES:
            token = name
        try:
            parse_field_spec(" ".join([*tokens, token]))
        except FieldSpecError:
            dropped.append(token)
            continue
        tokens.append(token)
    if dropped:
        warnings.append(
            "The field spec's " + ", ".join(f'"{t}"' for t in dropped) + " cannot be shown by "
            "Relevo and was left out."
        )
    return " ".join(tokens) if tokens else TEST_FIELD_SPECS[engine]


def _rows(value: Any, warnings: list[str]) -> int:
    if value is None or value == "":
        return 10
    rows = int(_number(value, ("try", "number_of_rows")))
    if rows < 1:
        raise _wrong(("try", "number_of_rows"), "a positive whole number")
    if rows > MAX_ROWS:
        warnings.append(f"The try asked for {rows} rows; Relevo fetches at most {MAX_ROWS}.")
        return MAX_ROWS
    return rows


# ----------------------------------------------------------------------------- import


def quepid_scorer_name(name: str) -> str:
    """Return the name an imported Quepid scorer gets: "AP@10 (Quepid)", never a built-in's."""
    return f"{name}{QUEPID_SUFFIX}"


def _shipped(name: str) -> ShippedScorer | None:
    """Return Quepid's shipped scorer of this name (also as Relevo names it, "AP@10 (Quepid)"),
    written for Relevo's Quepid environment."""
    stripped = name.strip()
    if stripped.endswith(QUEPID_SUFFIX):
        stripped = stripped[: -len(QUEPID_SUFFIX)]
    return shipped_scorer(stripped)


@dataclass
class ImportedCase:
    """What an import made."""

    case: Case
    warnings: list[str]
    queries: int
    ratings: int
    endpoint_created: bool
    scorer_created: bool
    endpoint: SearchEndpoint
    scorer: Scorer
    # Set by `check_endpoint`: None while unchecked or when the engine answered.
    endpoint_problem: str | None = None


async def check_endpoint(imported: ImportedCase) -> ImportedCase:
    """Send one query to the case's endpoint (a short wait) and note why it failed, if it did.

    The import stands either way: an engine that cannot be reached from here (a Quepid
    endpoint on a host only the browser saw, say) is reported, not refused.
    """
    endpoint = imported.endpoint
    if endpoint.engine == Engine.STATIC:  # nothing to reach: its results are a file
        imported.endpoint_problem = None
        return imported
    report = await endpoint_service.check_connection(
        endpoint=endpoint,
        query="test",
        template=None,
        field_spec=TEST_FIELD_SPECS[Engine(endpoint.engine)],
        timeout_s=REACH_TIMEOUT_S,
    )
    imported.endpoint_problem = None if report.ok else report.message
    return imported


@owns_transaction
def import_case(*, session: Session, user: User, raw: bytes) -> ImportedCase:
    """Create a case (and, when needed, its endpoint and scorer) from a Quepid case export.

    Everything is written in one transaction: any problem answers 422 and leaves nothing.
    """
    parsed = parse_case(decode(raw))
    warnings = list(parsed.warnings)
    try:
        knobs = case_service.check_search_settings(
            engine=parsed.endpoint.engine,
            template=parsed.query_template,
            field_spec=parsed.field_spec,
            options=parsed.options,
            knobs=_knobs(parsed, warnings),
        )
    except Invalid as exc:
        loc = ("try", "query_params") if "query_template" in exc.loc else ("try", "field_spec")
        raise Invalid(loc, f"Relevo cannot use the try's {_path(loc)}: {exc.message}") from exc
    scorer, scorer_created = _scorer_for(session, user, parsed, warnings)
    _check_scale(scorer, parsed)
    endpoint, endpoint_created = _endpoint_for(session, user, parsed.endpoint)
    case = Case(owner_id=user.id, name=parsed.name, scorer_id=scorer.id, options=parsed.options)
    case.current_try_number = 1
    session.add(case)
    session.flush()
    session.add(
        Try(
            case_id=case.id,
            number=1,
            search_endpoint_id=endpoint.id,
            query_template=parsed.query_template,
            field_spec=parsed.field_spec,
            rows=parsed.rows,
            knobs=knobs,
        )
    )
    ratings = _add_queries(session, user, case, parsed.queries)
    session.commit()
    return ImportedCase(
        case=case,
        warnings=warnings,
        queries=len(parsed.queries),
        ratings=ratings,
        endpoint_created=endpoint_created,
        scorer_created=scorer_created,
        endpoint=endpoint,
        scorer=scorer,
    )


def _knobs(parsed: QuepidCase, warnings: list[str]) -> dict[str, float]:
    """Return the template's knobs with the values of Quepid's curator variables."""
    knobs: dict[str, float] = {}
    for name in extract_knobs(parsed.query_template):
        value = parsed.curator_variables.get(name)
        if value is None:
            continue
        try:
            knobs[name] = _number(value, ("try", "curator_variables", name))
        except Invalid:
            warnings.append(
                f'The curator variable "{name}" is not a number ({value!r}); '
                f"the knob starts at {case_service.DEFAULT_KNOB:g}."
            )
    return knobs


def _scorer_for(
    session: Session, user: User, parsed: QuepidCase, warnings: list[str]
) -> tuple[Scorer, bool]:
    """Return the case's scorer and whether it was created for this import."""
    wanted = parsed.scorer
    shipped = _shipped(wanted.name)
    if wanted.code is not None:
        scale = wanted.scale or (
            [float(v) for v in shipped.scale] if shipped else _scale_of(parsed.queries)
        )
        # Quepid's own scorers of that name set 0-1 (or 0-100) scores: keep their scale.
        top = wanted.max_score or (float(shipped.max_score) if shipped else 100.0)
        same = shipped is not None and shipped.code == wanted.code
        return _javascript_scorer(
            session,
            user,
            _Wanted(
                # Quepid's own scorer (its code unchanged) is named as every import names it.
                name=quepid_scorer_name(shipped.name)
                if shipped is not None and same
                else wanted.name,
                code=wanted.code,
                scale=scale,
                max_score=top,
                environment=wanted.environment or QUEPID_ENVIRONMENT,
                labels=shipped.labels if shipped is not None and same else None,
                former_name=shipped.name if shipped is not None and same else None,
            ),
        )
    if shipped is not None:
        return _javascript_scorer(
            session,
            user,
            _Wanted(
                name=quepid_scorer_name(shipped.name),
                code=shipped.code,
                scale=[float(v) for v in shipped.scale],
                max_score=float(shipped.max_score),
                environment=QUEPID_ENVIRONMENT,
                labels=shipped.labels or None,
                former_name=shipped.name,
            ),
        )
    mine = session.scalar(
        select(Scorer)
        .where(Scorer.name == wanted.name, visible_clause(Scorer, user=user))
        .order_by(Scorer.owner_id != user.id, Scorer.id)
        .limit(1)
    )
    if mine is not None:
        return mine, False
    fallback = scorer_service.default_scorer(session=session)
    warnings.append(
        f'The Quepid scorer "{wanted.name}" is not one of Quepid\'s shipped scorers and the '
        f'file does not carry its code: the case is scored with "{fallback.name}". Create a '
        "JavaScript scorer with its code (environment quepid) and choose it in the case's "
        "settings to get Quepid's numbers."
    )
    return fallback, False


def _scale_of(queries: list[QuepidQuery]) -> list[float]:
    """Return a whole-number scale covering the ratings (0-3 when there are none)."""
    values = [r for q in queries for r in q.ratings.values()]
    low = math.floor(min(values, default=0.0))
    high = math.ceil(max(values, default=3.0))
    if high - low > 10:
        return sorted(set(values))[:11]
    return [float(v) for v in range(low, max(high, low + 1) + 1)]


@dataclass(frozen=True)
class _Wanted:
    """A JavaScript scorer the import needs."""

    name: str
    code: str
    scale: list[float]
    max_score: float
    environment: str
    labels: Mapping[str, str] | None
    former_name: str | None = None  # what earlier imports named it ("AP@10")


def _javascript_scorer(session: Session, user: User, wanted: _Wanted) -> tuple[Scorer, bool]:
    """Return the user's identical JavaScript scorer (same code, scale, max score and
    environment) of this name, or of its former name, else a new one of this name."""
    name = wanted.name[:MAX_NAME_CHARS]
    names = [name] if wanted.former_name is None else [name, wanted.former_name]
    config = scorer_service.build_config(
        kind=ScorerKind.JAVASCRIPT,
        params=None,
        scale=wanted.scale,
        scale_labels=wanted.labels,
        code=wanted.code,
        max_score=wanted.max_score,
        environment=wanted.environment,
    )
    candidates = session.scalars(
        select(Scorer)
        .where(
            Scorer.owner_id == user.id,
            Scorer.kind == ScorerKind.JAVASCRIPT,
            Scorer.name.in_(names),
        )
        .order_by(Scorer.name != name, Scorer.id)
    )
    for scorer in candidates:
        if (
            scorer.code == config.code
            and [float(v) for v in scorer.scale] == list(config.scale)
            and scorer.max_score == config.max_score
            and scorer.environment == config.environment
        ):
            return scorer, False
    scorer = Scorer(
        owner_id=user.id,
        name=name,
        kind=ScorerKind.JAVASCRIPT,
        params=dict(config.params),
        code=config.code,
        scale=list(config.scale),
        scale_labels=dict(wanted.labels) if wanted.labels else None,
        max_score=config.max_score,
        environment=config.environment,
    )
    session.add(scorer)
    session.flush()
    return scorer, True


def _check_scale(scorer: Scorer, parsed: QuepidCase) -> None:
    """Refuse ratings outside the scorer's scale, listing them (nothing is written)."""
    low, high = scorer_service.rating_bounds(scorer)
    off = [
        (index, query.text, doc, rating)
        for index, query in enumerate(parsed.queries)
        for doc, rating in query.ratings.items()
        if not low <= rating <= high
    ]
    if not off:
        return
    shown = "; ".join(f'"{text}" / {doc}: {rating:g}' for _i, text, doc, rating in off[:10])
    more = f" and {len(off) - 10} more" if len(off) > 10 else ""
    raise Invalid(
        ("queries", off[0][0], "ratings"),
        f'{len(off)} ratings are outside the scale of the scorer "{scorer.name}" '
        f"({low:g}-{high:g}): {shown}{more}. Nothing was imported.",
    )


def _endpoint_for(
    session: Session, user: User, wanted: QuepidEndpoint
) -> tuple[SearchEndpoint, bool]:
    """Return the user's endpoint with this engine and URL, else a new one."""
    existing = session.scalar(
        select(SearchEndpoint)
        .where(
            SearchEndpoint.owner_id == user.id,
            SearchEndpoint.engine == wanted.engine,
            SearchEndpoint.url == wanted.url,
            SearchEndpoint.mapper_code.is_(None)
            if wanted.mapper_code is None
            else SearchEndpoint.mapper_code == wanted.mapper_code,
        )
        .order_by(SearchEndpoint.id)
        .limit(1)
    )
    if existing is not None:
        return existing, False
    url, auth = wanted.url, wanted.basic_auth
    title = {
        Engine.SOLR: "Solr",
        Engine.ELASTICSEARCH: "Elasticsearch",
        Engine.SEARCHAPI: "Search API",
        Engine.VESPA: "Vespa",
        Engine.STATIC: "Result file",
    }.get(wanted.engine, "OpenSearch")
    endpoint = SearchEndpoint(
        owner_id=user.id,
        name=wanted.name or f"{title} {url}"[:MAX_NAME_CHARS],
        engine=wanted.engine,
        url=url,
        method=wanted.method,
        headers=wanted.headers,
        basic_auth=auth,
        requests_per_minute=wanted.requests_per_minute,
        mapper_code=wanted.mapper_code,
    )
    session.add(endpoint)
    session.flush()
    return endpoint, True


def _add_queries(session: Session, user: User, case: Case, queries: list[QuepidQuery]) -> int:
    """Insert the queries in order with their ratings; return the number of ratings."""
    rows: list[Query] = [
        Query(
            case_id=case.id,
            text=q.text,
            position=position,
            notes=q.notes,
            information_need=q.information_need,
            options=q.options,
            # Tags and a weight in the query's options become the query's own.
            tags=from_options(q.options)[0],
            weight=from_options(q.options)[1],
        )
        for position, q in enumerate(queries)
    ]
    session.add_all(rows)
    session.flush()
    now = utcnow()
    ratings = [
        {
            "query_id": row.id,
            "doc_id": doc,
            "rating": rating,
            "rated_by_id": user.id,
            "updated_at": now,
        }
        for row, q in zip(rows, queries, strict=True)
        for doc, rating in q.ratings.items()
    ]
    if ratings:
        session.execute(insert(Rating), ratings)
    return len(ratings)


# ----------------------------------------------------------------------------- export


def _json_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _quepid_name_of(scorer: Scorer) -> str:
    """Return the scorer's name for Quepid: Quepid's own name for its shipped scorers."""
    shipped = _shipped(scorer.name) if scorer.name.endswith(QUEPID_SUFFIX) else None
    if shipped is not None and scorer.code == shipped.code:
        return shipped.name
    return scorer.name


def export_case(session: Session, case: Case) -> Iterator[str]:
    """Yield the case as Quepid's case export JSON (its current try), streamed."""
    current = case_service.current_try(session=session, case=case)
    endpoint = current.search_endpoint
    scorer = case.scorer
    scorer_out: dict[str, Any] = {"name": _quepid_name_of(scorer)}
    if scorer.kind == ScorerKind.JAVASCRIPT:
        # Quepid's own exports name the scorer only; the code and scale make the file whole.
        scorer_out["code"] = scorer.code
        scorer_out["scale"] = [_json_number(v) for v in scorer.scale]
        scorer_out["max_score"] = _json_number(scorer.max_score)
        scorer_out["environment"] = scorer.environment
    engine = Engine(endpoint.engine)
    url = endpoint.url if engine == Engine.SOLR else endpoint.url.rstrip("/") + "/_search"
    head: dict[str, Any] = {
        "case_name": case.name,
        "owner_email": case.owner.email,
        "public": False,
        "archived": False,
        "options": case.options or {},
        "scorer": scorer_out,
        "try": {
            "escape_query": False,  # Relevo sends the query text as it is
            "field_spec": current.field_spec,
            "name": f"Try {current.number}",
            "number_of_rows": current.rows,
            "query_params": current.query_template,
            "curator_variables": [
                {"name": name, "value": _json_number(value)}
                for name, value in current.knobs.items()
            ],
            "search_endpoint": {
                "name": endpoint.name,
                "endpoint_url": url,
                "search_engine": QUEPID_ENGINE_NAMES[engine],
                "api_method": "POST" if engine != Engine.SOLR else str(endpoint.method),
                # Headers and basic auth are secrets: never written out.
                "custom_headers": None,
                "basic_auth_credential": None,
                "requests_per_minute": endpoint.requests_per_minute,
                **({"mapper_code": endpoint.mapper_code} if endpoint.mapper_code else {}),
            },
        },
    }
    opening = json.dumps(head, ensure_ascii=False)[:-1]
    yield opening + ', "queries": ['
    for n, item in enumerate(_export_queries(session, case)):
        yield (", " if n else "") + json.dumps(item, ensure_ascii=False)
    yield "]}"


def _rated(session: Session, case: Case) -> Iterator[tuple[int, str, float]]:
    """Yield (query id, doc id, rating) in query then doc order, streamed."""
    stmt = (
        select(Rating.query_id, Rating.doc_id, Rating.rating)
        .join(Query, Rating.query_id == Query.id)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id, Rating.doc_id)
        .execution_options(yield_per=READ_BATCH)
    )
    for row in session.execute(stmt):
        yield row[0], row[1], row[2]


def _export_queries(session: Session, case: Case) -> Iterator[dict[str, Any]]:
    queries = session.execute(
        select(Query.id, Query.text, Query.notes, Query.information_need, Query.options)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id)
    ).all()
    rated = _rated(session, case)
    pending = next(rated, None)
    for position, (query_id, text, notes, need, options) in enumerate(queries, 1):
        ratings: list[dict[str, Any]] = []
        while pending is not None and pending[0] == query_id:
            ratings.append({"doc_id": pending[1], "rating": _json_number(pending[2])})
            pending = next(rated, None)
        yield {
            "arranged_at": position,
            "arranged_next": None,
            "query_text": text,
            "options": options or None,
            "notes": notes,
            "information_need": need,
            "ratings": ratings,
        }

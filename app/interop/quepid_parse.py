"""Parsing a Quepid case export into plain data (no database): queries, try, endpoint, scorer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.errors import Invalid
from app.interop.quepid_values import (
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_ROWS,
    Loc,
    _clean_text,
    _headers,
    _json_object,
    _missing,
    _number,
    _object,
    _path,
    _ratings,
    _required,
    _text,
    _wrong,
)
from app.queries.bulk_lines import from_options
from app.search import FieldSpecError, adapter_for, parse_field_spec
from app.vocabulary import Engine, HttpMethod

QUEPID_ENVIRONMENT = "quepid"


# Imported Quepid scorers are named "AP@10 (Quepid)", so they are not taken for the built-in
# presets of the same name (which compute other numbers). Before, they were named as in
# Quepid ("AP@10"); a scorer imported under that name is still found and reused.
QUEPID_SUFFIX = " (Quepid)"


# How long the import waits for the endpoint's engine to answer one query.
REACH_TIMEOUT_S = 3.0


ENVIRONMENTS = ("relevo", QUEPID_ENVIRONMENT)


READ_BATCH = 5000


# The key under which Relevo's export carries, in a case's and a query's options (Quepid
# keeps unknown option keys as they are), what Quepid's case has no place for: the scorer's
# kind and parameters, extra metrics and the aggregate; a query's tags and weight.
RELEVO_KEY = "relevo"


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


@dataclass
class QuepidQuery:
    """One query of the export, with its ratings (doc id → rating)."""

    text: str
    notes: str | None
    information_need: str | None
    options: dict[str, Any]
    ratings: dict[str, float]
    # From Relevo's own export (the options' "relevo"): None when the file does not say.
    tags: list[str] | None = None
    weight: float | None = None


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
    # Relevo's own export: the case options' "relevo" (scorer, metrics, aggregate), unread.
    relevo: dict[str, Any] = field(default_factory=dict)


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
    relevo = _json_object(options.pop(RELEVO_KEY, None), ("options", RELEVO_KEY))
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
        relevo=relevo,
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
    adapter = adapter_for(engine)
    if adapter.answers_from_file:  # whatever URL Quepid kept is not called
        return _file_endpoint(source, nested is not None, engine)
    url = _text(_required(source, url_key, loc), (*loc, url_key))
    assert url is not None
    url = _index_url(url.strip(), engine, (*loc, url_key))
    mapper_code = None
    if adapter.needs_mapper:
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


def _file_endpoint(source: dict[str, Any], nested: bool, engine: Engine) -> QuepidEndpoint:
    """Return a result-file endpoint: no URL, no secrets; its file is uploaded in Relevo."""
    name = source.get("name") if nested else None
    return QuepidEndpoint(
        name=name.strip()[:MAX_NAME_CHARS] if isinstance(name, str) and name.strip() else None,
        engine=engine,
        url="",
        method=HttpMethod.GET,
        headers={},
        basic_auth=None,
        requests_per_minute=0,
    )


def _index_url(url: str, engine: Engine, loc: Loc) -> str:
    """Return Relevo's endpoint URL from the URL Quepid searches: the engine's adapter takes
    off what it adds itself (Elasticsearch's /_search, Vespa's /search/)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise _wrong(loc, "an http:// or https:// URL") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise _wrong(loc, "an http:// or https:// URL")
    return adapter_for(engine).endpoint_url(url).rstrip("/")


def options_warnings(left_out: list[tuple[str, list[str]]], shown: int = 10) -> list[str]:
    """Return a warning for each query whose tags or weight were not all taken (at most
    ``shown``, then how many more): an import never drops them silently."""
    said = [f'Query "{text[:80]}": {"; ".join(problems)}.' for text, problems in left_out[:shown]]
    if len(left_out) > shown:
        said.append(f"{len(left_out) - shown} more queries had tags or a weight left out.")
    return said


def _queries(items: list[Any], warnings: list[str]) -> list[QuepidQuery]:
    by_text: dict[str, QuepidQuery] = {}
    left_out: list[tuple[str, list[str]]] = []
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
        extras = _json_object(options.pop(RELEVO_KEY, None), (*loc, "options", RELEVO_KEY))
        if text in by_text:
            repeated += 1
            earlier = by_text[text]
            earlier.ratings.update(ratings)
            earlier.notes = notes or earlier.notes
            earlier.information_need = need or earlier.information_need
            earlier.options = {**earlier.options, **options}
            continue
        by_text[text] = QuepidQuery(text, notes or None, need or None, options, ratings)
        if extras:
            # The same rules as tags and a weight in Quepid's own query options.
            by_text[text].tags, by_text[text].weight, problems = from_options(extras)
            if problems:
                left_out.append((text, problems))
    warnings.extend(options_warnings(left_out))
    if repeated:
        warnings.append(
            f"{repeated} queries repeat the text of an earlier one: each was merged into the "
            "first (its ratings win over the earlier ones for the same document)."
        )
    return list(by_text.values())


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
        return adapter_for(engine).test_field_spec
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
    return " ".join(tokens) if tokens else adapter_for(engine).test_field_spec


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

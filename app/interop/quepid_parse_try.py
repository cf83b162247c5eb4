"""Reading a Quepid export's try into plain data (no database): its search endpoint, field
spec, number of rows and curator variables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from app.errors import Invalid
from app.interop.quepid_values import (
    MAX_NAME_CHARS,
    MAX_ROWS,
    Loc,
    _headers,
    _missing,
    _number,
    _object,
    _required,
    _text,
    _wrong,
)
from app.search import FieldSpecError, adapter_for, parse_field_spec
from app.vocabulary import Engine, HttpMethod

# How long the import waits for the endpoint's engine to answer one query.
REACH_TIMEOUT_S = 3.0


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


def read_endpoint(the_try: dict[str, Any]) -> QuepidEndpoint:
    """Return the search endpoint: `try.search_endpoint` (Quepid 7.10 on) or the try's own keys."""
    nested = the_try.get("search_endpoint") is not None
    source, loc, url_key = _endpoint_source(the_try)
    engine = _engine(source, loc)
    adapter = adapter_for(engine)
    if adapter.answers_from_file:  # whatever URL Quepid kept is not called
        return _file_endpoint(source, nested, engine)
    url = _text(_required(source, url_key, loc), (*loc, url_key))
    assert url is not None
    url = _index_url(url.strip(), engine, (*loc, url_key))
    mapper_code = _mapper_code(source, loc) if adapter.needs_mapper else None
    method = str(source.get("api_method") or "GET").upper()
    headers = _headers(source.get("custom_headers"), (*loc, "custom_headers"))
    url, auth = _url_and_auth(source, loc, url)
    return QuepidEndpoint(
        name=_endpoint_name(source, nested),
        engine=engine,
        url=url,
        # Quepid's JSONP is a GET request; Relevo sends Elasticsearch bodies by POST anyway.
        method=HttpMethod.POST if method == "POST" else HttpMethod.GET,
        headers=headers,
        basic_auth=auth,
        requests_per_minute=_per_minute(source.get("requests_per_minute")),
        mapper_code=mapper_code,
    )


def _endpoint_source(the_try: dict[str, Any]) -> tuple[dict[str, Any], Loc, str]:
    """Return the object holding the endpoint's keys, where it is and its URL's key."""
    nested = the_try.get("search_endpoint")
    if nested is not None:
        return (
            _object(nested, ("try", "search_endpoint")),
            ("try", "search_endpoint"),
            "endpoint_url",
        )
    if "search_url" in the_try:
        return the_try, ("try",), "search_url"
    raise _missing(("try", "search_endpoint"))


def _engine(source: dict[str, Any], loc: Loc) -> Engine:
    """Return the engine Relevo searches the endpoint's `search_engine` with; 422 if none."""
    quepid_engine = _text(_required(source, "search_engine", loc), (*loc, "search_engine"))
    assert quepid_engine is not None
    engine = ENGINES.get(quepid_engine.strip().lower())
    if engine is None:
        raise Invalid(
            (*loc, "search_engine"),
            "Relevo searches Solr, Elasticsearch, OpenSearch, Vespa, search APIs and result "
            f'files; this case uses a "{quepid_engine}" endpoint, which Relevo cannot search.',
        )
    return engine


def _mapper_code(source: dict[str, Any], loc: Loc) -> str:
    """Return a search API endpoint's mapper code, which it cannot do without."""
    mapper_loc = (*loc, "mapper_code")
    mapper_code = _text(_required(source, "mapper_code", loc), mapper_loc)
    if not mapper_code or not mapper_code.strip():
        raise _wrong(mapper_loc, "JavaScript defining docsMapper(data)")
    return mapper_code


def _url_and_auth(source: dict[str, Any], loc: Loc, url: str) -> tuple[str, str | None]:
    """Return the URL without credentials and the basic auth: the file's, else the URL's."""
    auth_loc = (*loc, "basic_auth_credential")
    auth = _text(source.get("basic_auth_credential"), auth_loc, optional=True)
    if auth and ":" not in auth:
        raise _wrong(auth_loc, '"user:password"')
    parsed = httpx.URL(url)
    if parsed.userinfo:  # credentials in the URL become basic auth, as for any endpoint
        url = str(parsed.copy_with(username=None, password=None))
        auth = auth or f"{parsed.username}:{parsed.password}"
    return url, auth or None


def _per_minute(value: Any) -> int:
    """Return the endpoint's requests per minute: a positive whole number, else 0 (no limit)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return 0


def _endpoint_name(source: dict[str, Any], nested: bool) -> str | None:
    """Return the name of a nested `search_endpoint`, cut to size (an older try has none)."""
    name = source.get("name") if nested else None
    return name.strip()[:MAX_NAME_CHARS] if isinstance(name, str) and name.strip() else None


def _file_endpoint(source: dict[str, Any], nested: bool, engine: Engine) -> QuepidEndpoint:
    """Return a result-file endpoint: no URL, no secrets; its file is uploaded in Relevo."""
    return QuepidEndpoint(
        name=_endpoint_name(source, nested),
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


def read_curator_variables(the_try: dict[str, Any]) -> dict[str, Any]:
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


def read_field_spec(value: Any, engine: Engine, warnings: list[str]) -> str:
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


def read_rows(value: Any, warnings: list[str]) -> int:
    """Return the try's number of rows: 10 when unset, at most MAX_ROWS (with a warning)."""
    if value is None or value == "":
        return 10
    rows = int(_number(value, ("try", "number_of_rows")))
    if rows < 1:
        raise _wrong(("try", "number_of_rows"), "a positive whole number")
    if rows > MAX_ROWS:
        warnings.append(f"The try asked for {rows} rows; Relevo fetches at most {MAX_ROWS}.")
        return MAX_ROWS
    return rows

"""The httpx request of one query, or of a doc lookup by id, for each kind of engine.

Builders only: auth is added when the client sends the request, and the query's body comes
from each engine's own module (elastic, solr, vespa, searchapi, lookup).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx
import orjson

from app.search.elastic import build_es_body
from app.search.errors import RequestBuildError
from app.search.fieldspec import FieldSpec
from app.search.lookup import build_es_ids_body, build_solr_ids_params
from app.search.models import EndpointConfig, SearchRequest
from app.search.searchapi import build_searchapi_body, build_searchapi_params
from app.search.solr import build_solr_params
from app.search.vespa import build_vespa_body
from app.vocabulary import Engine

__all__ = ["build_http_request", "build_ids_http_request"]

_FORM = "application/x-www-form-urlencoded"


# Parsing URLs costs more than rendering a query; a run reuses a handful.
@functools.lru_cache(maxsize=256)
def _base_url(url: str) -> httpx.URL:
    return httpx.URL(url)


@functools.lru_cache(maxsize=256)
def _es_search_url(url: str) -> httpx.URL:
    base = httpx.URL(url)
    return base.copy_with(path=base.path.rstrip("/") + "/_search")


def build_http_request(
    http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
) -> httpx.Request:
    """Return the httpx request for one query (headers and timeout; auth is added on send)."""
    headers = {"Accept": "application/json", **endpoint.headers}
    timeout = httpx.Timeout(endpoint.timeout_s)
    url = _base_url(endpoint.url)
    if endpoint.engine in _OTHER_ENGINES:
        return _build_other(http, endpoint, request, headers, timeout)
    if endpoint.engine != "solr":
        content = _json_bytes(build_es_body(request))
        headers = {"Content-Type": "application/json", **headers}
        built = http.build_request(
            "POST", _es_search_url(endpoint.url), content=content, headers=headers, timeout=timeout
        )
    elif endpoint.method == "POST":
        form = str(httpx.QueryParams(tuple(build_solr_params(request))))
        headers["Content-Type"] = _FORM
        built = http.build_request("POST", url, content=form, headers=headers, timeout=timeout)
    else:
        full = url.copy_merge_params(tuple(build_solr_params(request)))
        built = http.build_request("GET", full, headers=headers, timeout=timeout)
    return built


_OTHER_ENGINES = frozenset({Engine.VESPA, Engine.SEARCHAPI, Engine.STATIC})


def _build_other(
    http: httpx.AsyncClient,
    endpoint: EndpointConfig,
    request: SearchRequest,
    headers: dict[str, str],
    timeout: httpx.Timeout,
) -> httpx.Request:
    if endpoint.engine == Engine.STATIC:
        raise RequestBuildError("a result file endpoint is read from its file, not over HTTP")
    if endpoint.engine == Engine.VESPA:
        base = _base_url(endpoint.url)
        url = base.copy_with(path=base.path.rstrip("/") + "/search/")
        content = _json_bytes(build_vespa_body(request))
        headers = {"Content-Type": "application/json", **headers}
        return http.build_request("POST", url, content=content, headers=headers, timeout=timeout)
    headers = {"Accept": "application/json, text/html;q=0.9, */*;q=0.5", **endpoint.headers}
    if endpoint.method == "POST":
        content = _json_bytes(build_searchapi_body(request))
        headers = {"Content-Type": "application/json", **headers}
        return http.build_request(
            "POST", _base_url(endpoint.url), content=content, headers=headers, timeout=timeout
        )
    full = _base_url(endpoint.url).copy_merge_params(tuple(build_searchapi_params(request)))
    return http.build_request("GET", full, headers=headers, timeout=timeout)


def build_ids_http_request(
    http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
) -> httpx.Request:
    """Return the httpx request fetching these doc ids (auth is added on send)."""
    if endpoint.engine in _OTHER_ENGINES:
        raise RequestBuildError(f"a {endpoint.engine} endpoint cannot look docs up by id")
    headers = {"Accept": "application/json", **endpoint.headers}
    timeout = httpx.Timeout(endpoint.timeout_s)
    if endpoint.engine != "solr":
        content = _json_bytes(build_es_ids_body(ids, spec))
        headers = {"Content-Type": "application/json", **headers}
        return http.build_request(
            "POST", _es_search_url(endpoint.url), content=content, headers=headers, timeout=timeout
        )
    params = build_solr_ids_params(ids, spec)
    if endpoint.method == "POST":
        headers["Content-Type"] = _FORM
        form = str(httpx.QueryParams(params))
        return http.build_request(
            "POST", _base_url(endpoint.url), content=form, headers=headers, timeout=timeout
        )
    full = _base_url(endpoint.url).copy_merge_params(params)
    return http.build_request("GET", full, headers=headers, timeout=timeout)


def _json_bytes(body: Any) -> bytes:
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # an integer beyond 64 bits in the options, say
        return json.dumps(body).encode()

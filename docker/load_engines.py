"""Load the demo movies into the compose Elasticsearch and Solr (run by the `loader` service).

Environment: ``ELASTICSEARCH_URL`` (default http://elasticsearch:9200) and ``SOLR_CORE_URL``
(default http://solr:8983/solr/movies). Either may be set to an empty string to skip it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import httpx

from app.demo.corpus import index_movies, load_movies

# Solr field types from the _default configset; fields not listed are left to schemaless
# guessing. Single-valued, so responses show "title": "..." rather than a list.
_SOLR_FIELDS: dict[str, str] = {
    "title": "text_en",
    "director": "text_en",
    "distributor": "text_en",
    "genre": "string",
    "mpaa_rating": "string",
    "source": "string",
    "creative_type": "string",
    "release_date": "pdate",
    "running_time_min": "pint",
    "imdb_rating": "pfloat",
    "imdb_votes": "pint",
    "rotten_tomatoes_rating": "pint",
    "us_gross": "plong",
    "worldwide_gross": "plong",
    "us_dvd_sales": "plong",
    "production_budget": "plong",
}


def _solr_schema(http: httpx.Client, core: str) -> None:
    existing = http.get(f"{core}/schema/fields").raise_for_status().json()
    names = {field["name"] for field in existing.get("fields", [])}
    commands: dict[str, list[dict[str, Any]]] = {"add-field": [], "replace-field": []}
    for name, kind in _SOLR_FIELDS.items():
        field = {"name": name, "type": kind, "stored": True, "indexed": True, "multiValued": False}
        commands["replace-field" if name in names else "add-field"].append(field)
    body = {key: value for key, value in commands.items() if value}
    response = http.post(f"{core}/schema", json=body)
    if response.status_code >= 400:
        raise RuntimeError(f"Solr schema update failed: {response.text[:500]}")


def load_solr(core: str, http: httpx.Client) -> int:
    """Return the number of movies posted to the Solr core (replacing its documents)."""
    _solr_schema(http, core)
    movies = load_movies()
    docs = []
    for movie in movies:
        doc = dict(movie)
        if "release_date" in doc:
            doc["release_date"] = f"{doc['release_date']}T00:00:00Z"
        docs.append(doc)
    http.post(f"{core}/update", json={"delete": {"query": "*:*"}}).raise_for_status()
    response = http.post(f"{core}/update", params={"commit": "true"}, json=docs)
    if response.status_code >= 400:
        raise RuntimeError(f"Solr update failed: {response.text[:500]}")
    return len(docs)


def main() -> int:
    """Load every configured engine; return the process exit status."""
    es_url = os.environ.get("ELASTICSEARCH_URL", "http://elasticsearch:9200")
    solr_core = os.environ.get("SOLR_CORE_URL", "http://solr:8983/solr/movies").rstrip("/")
    with httpx.Client(timeout=120.0) as http:
        if es_url:
            count = index_movies(es_url, "movies", http=http)
            print(f"elasticsearch: indexed {count} movies into {es_url}/movies")
        if solr_core:
            count = load_solr(solr_core, http)
            print(f"solr: indexed {count} movies into {solr_core}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

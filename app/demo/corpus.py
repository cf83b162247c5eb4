"""The demo corpus: 3,201 films, cleaned on load, and helpers to index them.

Data: ``movies.json`` from the vega-datasets package (version 3.2.1, ``data/movies.json``),
BSD-3-Clause licensed, copyright the Vega project / University of Washington Interactive
Data Lab. Stored here gzipped as ``movies.json.gz``.

Cleaning: field names become snake_case (``Major Genre`` becomes ``genre``), null values
are dropped, titles that are numbers (``1776``, ``300``) become strings, release dates
(``Jun 12 1998``) become ISO dates, and each film gets a stable ``id``: its 1-based
position in the file, as a string.
"""

from __future__ import annotations

import gzip
import json
from datetime import date
from importlib import resources
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from osmem_server import OsmemServer

__all__ = ["MOVIES_INDEX_BODY", "index_movies", "load_movies", "start_osmem"]

_RENAMES = {
    "Title": "title",
    "Director": "director",
    "Major Genre": "genre",
    "Release Date": "release_date",
    "MPAA Rating": "mpaa_rating",
    "Distributor": "distributor",
    "Source": "source",
    "Creative Type": "creative_type",
    "Running Time min": "running_time_min",
    "IMDB Rating": "imdb_rating",
    "IMDB Votes": "imdb_votes",
    "Rotten Tomatoes Rating": "rotten_tomatoes_rating",
    "US Gross": "us_gross",
    "Worldwide Gross": "worldwide_gross",
    "US DVD Sales": "us_dvd_sales",
    "Production Budget": "production_budget",
}
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_TEXT = {"type": "text", "analyzer": "english"}
_KEYWORD = {"type": "keyword"}
# Words as typed, not stemmed: a misspelling is then an edit or two away from the word
# itself (the English stem of "terminater" is "terminat", of "terminator" "termin").
_PLAIN = {"type": "text", "analyzer": "plain"}

MOVIES_INDEX_BODY: dict[str, Any] = {
    "settings": {
        "number_of_shards": 1,
        "number_of_replicas": 0,
        "analysis": {
            # Single letters (initials such as the "M." of "M. Night Shyamalan") are left
            # out: two edits from a three-letter word, a fuzzy match on them would score
            # below zero, and the engine refuses a function score below zero.
            "filter": {"two_letters": {"type": "length", "min": 2}},
            "analyzer": {
                "plain": {
                    "type": "custom",
                    "tokenizer": "standard",
                    "filter": ["lowercase", "two_letters"],
                }
            },
        },
    },
    "mappings": {
        "properties": {
            "id": _KEYWORD,
            "title": {**_TEXT, "fields": {"raw": _KEYWORD, "plain": _PLAIN}},
            "director": {**_TEXT, "fields": {"raw": _KEYWORD, "plain": _PLAIN}},
            "genre": _KEYWORD,
            "release_date": {"type": "date", "format": "yyyy-MM-dd"},
            "mpaa_rating": _KEYWORD,
            "distributor": {**_TEXT, "fields": {"raw": _KEYWORD}},
            "source": _KEYWORD,
            "creative_type": _KEYWORD,
            "running_time_min": {"type": "integer"},
            "imdb_rating": {"type": "float"},
            "imdb_votes": {"type": "integer"},
            "rotten_tomatoes_rating": {"type": "integer"},
            "us_gross": {"type": "long"},
            "worldwide_gross": {"type": "long"},
            "us_dvd_sales": {"type": "long"},
            "production_budget": {"type": "long"},
        }
    },
}


def _clean_value(key: str, value: Any) -> Any:
    if key == "title":
        return str(value)
    if key == "release_date" and isinstance(value, str):
        return _iso_date(value)
    return value


def _iso_date(text: str) -> str:
    # Parsed by hand: strptime's %b follows the process locale.
    parts = text.split()
    if len(parts) == 3 and parts[0][:3].lower() in _MONTHS:
        try:
            month = _MONTHS.index(parts[0][:3].lower()) + 1
            return date(int(parts[2]), month, int(parts[1])).isoformat()
        except ValueError:
            pass
    return text


def _clean(position: int, raw: dict[str, Any]) -> dict[str, Any]:
    movie: dict[str, Any] = {"id": str(position)}
    for key, value in raw.items():
        if value is None:
            continue
        name = _RENAMES.get(key, key.lower().replace(" ", "_"))
        movie[name] = _clean_value(name, value)
    return movie


def load_movies() -> list[dict[str, Any]]:
    """Return the cleaned demo films, in file order, each with a stable string ``id``."""
    data = resources.files("app.demo").joinpath("movies.json.gz").read_bytes()
    raw = json.loads(gzip.decompress(data))
    return [_clean(position, movie) for position, movie in enumerate(raw, start=1)]


def _bulk_lines(index: str, movies: list[dict[str, Any]]) -> str:
    lines = []
    for movie in movies:
        lines.append(json.dumps({"index": {"_index": index, "_id": movie["id"]}}))
        lines.append(json.dumps(movie, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _check(response: httpx.Response, what: str) -> None:
    if response.status_code >= 400:
        raise RuntimeError(f"{what} failed: HTTP {response.status_code}: {response.text[:300]}")


def index_movies(base_url: str, index: str = "movies", *, http: httpx.Client | None = None) -> int:
    """Return the number of films indexed into ``index`` (replaced if it exists)."""
    client = http or httpx.Client(timeout=60.0)
    base = base_url.rstrip("/")
    try:
        deleted = client.delete(f"{base}/{index}")
        if deleted.status_code != 404:
            _check(deleted, f"deleting index {index}")
        _check(client.put(f"{base}/{index}", json=MOVIES_INDEX_BODY), f"creating index {index}")
        movies = load_movies()
        response = client.post(
            f"{base}/{index}/_bulk",
            params={"refresh": "true"},
            content=_bulk_lines(index, movies).encode(),
            headers={"Content-Type": "application/x-ndjson"},
        )
        _check(response, "bulk load")
        result = response.json()
        if result.get("errors"):
            failed = [i for i in result.get("items", []) if "error" in next(iter(i.values()))]
            raise RuntimeError(f"bulk load: {len(failed)} documents failed, first: {failed[:1]}")
        return len(movies)
    finally:
        if http is None:
            client.close()


def start_osmem(*, addr: str | None = None) -> OsmemServer:
    """Return a started osmem-server (English analysis only); call ``.close()`` when done."""
    from osmem_server import OsmemServer

    server: OsmemServer = OsmemServer.start(japanese=False, addr=addr)
    return server

"""The demo corpus loads and cleans the vega-datasets movies."""

from __future__ import annotations

from app.demo.corpus import MOVIES_INDEX_BODY, load_movies


def test_load_movies_cleans_records() -> None:
    movies = load_movies()
    assert len(movies) == 3201
    assert [m["id"] for m in movies[:3]] == ["1", "2", "3"]
    assert movies[0] == {
        "id": "1",
        "title": "The Land Girls",
        "us_gross": 146083,
        "worldwide_gross": 146083,
        "production_budget": 8000000,
        "release_date": "1998-06-12",
        "mpaa_rating": "R",
        "distributor": "Gramercy",
        "imdb_rating": 6.1,
        "imdb_votes": 1071,
    }
    by_id = {m["id"]: m for m in movies}
    assert by_id["22"]["title"] == "1776"
    assert by_id["913"]["title"] == "Star Wars Ep. IV: A New Hope"
    assert by_id["913"]["genre"] == "Adventure"
    assert all(value is not None for m in movies for value in m.values())
    assert all(isinstance(m.get("title", ""), str) for m in movies)
    assert all(len(m.get("release_date", "2000-01-01")) == 10 for m in movies)


def test_every_field_is_mapped() -> None:
    mapped = set(MOVIES_INDEX_BODY["mappings"]["properties"])
    assert {key for m in load_movies() for key in m} <= mapped

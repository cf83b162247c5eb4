"""JSON columns are written with orjson, falling back to the standard library."""

from __future__ import annotations

import json

from app.db import dumps


def test_json_columns_are_compact_and_keep_every_value() -> None:
    assert dumps({"title": "Amélie", "ids": [1, 2.5, None], 3: True}) == (
        '{"title":"Amélie","ids":[1,2.5,null],"3":true}'
    )


def test_values_orjson_refuses_are_still_written() -> None:
    # An engine's document may hold an integer beyond 64 bits; the run must still store it.
    assert json.loads(dumps({"big": 10**30})) == {"big": 10**30}


def test_not_a_number_is_stored_as_null() -> None:
    assert dumps({"score": float("nan"), "inf": float("inf")}) == '{"score":null,"inf":null}'

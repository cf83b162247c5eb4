"""Parsing a Quepid case export is pure: no database, no app, just the file's values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.errors import Invalid
from app.interop.quepid_case import decode, parse_case
from app.vocabulary import Engine, HttpMethod

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "quepid"


def test_the_elasticsearch_export_parses_into_relevos_terms() -> None:
    case = parse_case(decode((FIXTURES / "movies_es_case.json").read_bytes()))
    assert case.name == "Movies: title boosts"
    assert (case.endpoint.engine, case.endpoint.method) == (Engine.OPENSEARCH, HttpMethod.POST)
    assert case.endpoint.url == "http://127.0.0.1:9200/movies"
    assert (case.rows, case.scorer.name, case.curator_variables) == (
        10,
        "P@10",
        {"titleBoost": 10.0},
    )
    assert case.field_spec == "id:_id title:title director genre thumb:poster_url"
    assert [(q.text, len(q.ratings)) for q in case.queries] == [
        ("star wars", 9),
        ("batman", 4),
        ("toy story", 0),
    ]
    assert case.warnings == []


def test_quepids_own_import_wrapping_is_read_too() -> None:
    data = json.loads((FIXTURES / "movies_es_case.json").read_text())
    assert parse_case({"case": data}).name == "Movies: title boosts"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "This is not a Quepid case export: the file must hold a JSON object."),
        ({"case_name": "x"}, 'This is not a Quepid case export: "scorer" is missing.'),
    ],
)
def test_a_wrong_export_names_what_is_wrong(data: object, message: str) -> None:
    with pytest.raises(Invalid) as refused:
        parse_case(data)
    assert message in refused.value.message

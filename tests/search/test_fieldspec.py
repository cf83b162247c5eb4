"""Field spec parsing and field lookup (pure)."""

from __future__ import annotations

import pytest

from app.search import FieldSpec, FieldSpecError, parse_field_spec
from app.search.fieldspec import is_missing, lookup_field


def test_parse_full_spec() -> None:
    spec = parse_field_spec("id:_id title:title overview, cast thumb:poster image:backdrop")
    assert spec == FieldSpec(
        id_field="_id",
        title_field="title",
        sub_fields=("overview", "cast"),
        thumb_field="poster",
        image_field="backdrop",
    )
    assert spec.all_fields() == ["_id", "title", "overview", "cast", "poster", "backdrop"]
    assert spec.display_fields() == ["title", "overview", "cast", "poster", "backdrop"]


def test_id_defaults_to_id_and_duplicates_are_dropped() -> None:
    spec = parse_field_spec("title:title genre genre author.name")
    assert spec.id_field == "id"
    assert spec.all_fields() == ["id", "title", "genre", "author.name"]


@pytest.mark.parametrize(
    ("spec", "token"),
    [
        ("id:id foo:bar", "foo:bar"),
        ("id:id title:", "title:"),
        ("id:id id:other", "id:other"),
        ("id:id ti%tle", "ti%tle"),
    ],
)
def test_bad_token_is_named(spec: str, token: str) -> None:
    with pytest.raises(FieldSpecError, match=f"token '{token}'"):
        parse_field_spec(spec)


def test_empty_spec_is_an_error() -> None:
    with pytest.raises(FieldSpecError, match="empty"):
        parse_field_spec("  ")


def test_lookup_nested_and_multi_valued() -> None:
    doc = {
        "a.b": "literal",
        "a": {"b": "nested", "c": {"d": 1}},
        "cast": [{"name": "x"}, {"name": ["y", "z"]}, {"other": 1}],
    }
    assert lookup_field(doc, "a.b") == "literal"
    assert lookup_field(doc, "a.c.d") == 1
    assert lookup_field(doc, "cast.name") == ["x", "y", "z"]
    assert is_missing(lookup_field(doc, "a.x"))
    assert is_missing(lookup_field(doc, "cast.none"))

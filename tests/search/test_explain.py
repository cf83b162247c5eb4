"""The readable explain: top contributions of Lucene-shaped explains, Solr text as it is."""

from __future__ import annotations

from typing import Any

from app.search.explain import ExplainLine, explain_view


def _weight(term: str, value: float) -> dict[str, Any]:
    return {
        "value": value,
        "description": f"weight({term} in 12) [PerFieldSimilarity], result of:",
        "details": [
            {
                "value": value,
                "description": "score(freq=1.0), computed as boost * idf * tf from:",
                "details": [
                    {"value": 2.2, "description": "boost", "details": []},
                    {
                        "value": 3.1,
                        "description": "idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:",
                        "details": [],
                    },
                ],
            }
        ],
    }


# What Elasticsearch and OpenSearch put in a hit's _explanation for a multi_match.
ES_EXPLAIN: dict[str, Any] = {
    "value": 12.3,
    "description": "sum of:",
    "details": [
        _weight("overview:wars", 4.2),
        _weight("title:star", 8.1),
    ],
}


def _lines(view_lines: list[ExplainLine]) -> list[tuple[int, float | None, str]]:
    return [(line.depth, line.value, line.description) for line in view_lines]


def test_es_explain_lists_biggest_contribution_first_indented_by_depth() -> None:
    view = explain_view(ES_EXPLAIN, max_depth=2)
    assert _lines(view.lines) == [
        (0, 12.3, "sum of:"),
        (1, 8.1, "weight(title:star in 12) [PerFieldSimilarity], result of:"),
        (1, 4.2, "weight(overview:wars in 12) [PerFieldSimilarity], result of:"),
    ]
    assert view.text is None


def test_depth_limit_stops_the_tree() -> None:
    view = explain_view(ES_EXPLAIN, max_depth=4)
    depths = [line.depth for line in view.lines]
    assert max(depths) == 3
    # sum → weight → score → boost / idf, for each of the two weights.
    assert len(view.lines) == 1 + 2 * (1 + 1 + 2)
    assert view.lines[3] == ExplainLine(depth=3, value=3.1, description=view.lines[3].description)


def test_children_beyond_the_breadth_fold_into_one_summed_line() -> None:
    explain = {
        "value": 10.0,
        "description": "sum of:",
        "details": [
            {"value": float(v), "description": f"weight(f{v})", "details": []} for v in (1, 4, 2, 3)
        ],
    }
    view = explain_view(explain, breadth=2)
    assert _lines(view.lines) == [
        (0, 10.0, "sum of:"),
        (1, 4.0, "weight(f4)"),
        (1, 3.0, "weight(f3)"),
        (1, 3.0, "2 more"),
    ]
    assert view.lines[-1].folded == 2


def test_solr_structured_explain_reads_the_same_keys() -> None:
    solr = {
        "match": True,
        "value": 5.1,
        "description": "max of:",
        "details": [
            {"match": True, "value": 5.1, "description": "weight(title:star in 3)", "details": []},
            {"match": True, "value": 1.9, "description": "weight(overview:star in 3)"},
        ],
    }
    assert _lines(explain_view(solr).lines) == [
        (0, 5.1, "max of:"),
        (1, 5.1, "weight(title:star in 3)"),
        (1, 1.9, "weight(overview:star in 3)"),
    ]


def test_solr_plain_text_is_shown_as_it_is() -> None:
    text = "\n5.1 = max of:\n  5.1 = weight(title:star in 3) [SchemaSimilarity], result of:\n"
    view = explain_view(text)
    assert view.lines == []
    assert (
        view.text == "5.1 = max of:\n  5.1 = weight(title:star in 3) [SchemaSimilarity], result of:"
    )


def test_odd_values_give_no_tree_and_a_missing_value_shows_as_none() -> None:
    assert explain_view(["not", "an", "explain"]).empty
    assert explain_view({"something": "else"}).empty
    view = explain_view({"value": "NaN?", "description": "odd", "details": "nope"})
    assert _lines(view.lines) == [(0, None, "odd")]


def test_values_read_without_exponents_where_they_can() -> None:
    def shown(value: float | None) -> str:
        return ExplainLine(depth=0, value=value, description="").shown_value

    assert [shown(v) for v in (12.3456, 0.5, 2.0, 123456.7, 0.00001234, 0.0, None)] == [
        "12.35",
        "0.5",
        "2",
        "123,457",
        "1.23e-05",
        "0",
        "\u2013",
    ]

"""Importing Rated Ranking Evaluator (RRE) ratings files into a case."""

from __future__ import annotations

import json
from typing import Any

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries
from tests.support.ratings_files import _case, _export, _rate

# The shape RRE documents: topics, query groups, templated queries, ratings per group
# (doc id → {"gain": N}); written here for the test, not copied from RRE.
RRE_FILE: dict[str, Any] = {
    "index": "instruments",
    "corpora_file": "instruments.bulk",
    "id_field": "_id",
    "topics": [
        {
            "description": "Guitars",
            "query_groups": [
                {
                    "name": "Brand",
                    "description": "The brand in several spellings",
                    "queries": [
                        {"template": "q.json", "placeholders": {"$query": "gibson"}},
                        {
                            "template": "by_strings.json",
                            "placeholders": {"$query": "Gibson guitar", "$strings": 6},
                        },
                    ],
                    "relevant_documents": {"g1": {"gain": 3}, "g2": {"gain": 1}},
                },
                {
                    "name": "Model",
                    "queries": [{"template": "q.json", "placeholders": {"$query": "les paul"}}],
                    # The list form: docs grouped by gain.
                    "relevant_documents": [
                        {"document_ids": ["lp1", "lp2"], "gain": 2},
                        {"document_ids": ["g1"], "gain": 0},
                    ],
                },
            ],
        }
    ],
}


def _import(api: ApiUser, case_id: int, data: Any, **params: Any) -> Any:
    body = data if isinstance(data, str) else json.dumps(data)
    return api.post(
        f"/api/v1/cases/{case_id}/ratings/import",
        params={"format": "rre", **params},
        content=body.encode(),
        headers={"Content-Type": "application/json"},
    )


def _ratings(api: ApiUser, case_id: int) -> dict[str, dict[str, float]]:
    queries = api.get(f"/api/v1/cases/{case_id}/queries").json()
    out: dict[str, dict[str, float]] = {}
    for query in queries:
        got = api.get(f"/api/v1/cases/{case_id}/queries/{query['id']}/ratings").json()
        out[query["text"]] = {r["doc_id"]: r["rating"] for r in got["ratings"]}
    return out


def test_rre_ratings_file_becomes_the_cases_queries_and_ratings(api: ApiUser) -> None:
    case_id = _case(api)
    ids = add_queries(api, case_id, ["gibson"])
    _rate(api, case_id, ids["gibson"], {"g1": 1, "old": 2})
    answer = _import(api, case_id, RRE_FILE)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["queries_created"] == 2
    assert result["new_queries"] == ["Gibson guitar", "les paul"]
    assert _ratings(api, case_id) == {
        "gibson": {"g1": 3.0, "g2": 1.0, "old": 2.0},  # matched by text; other ratings stay
        "Gibson guitar": {"g1": 3.0, "g2": 1.0},
        "les paul": {"lp1": 2.0, "lp2": 2.0, "g1": 0.0},
    }


def test_grade_keyed_form_with_ratings_on_each_query_and_unrated_queries(api: ApiUser) -> None:
    case_id = _case(api)
    grade_keyed = {
        "id_field": "id",
        "index": "Movies",
        "template": "template.json",
        "queries": [
            {"placeholders": {"$query": "star trek"}, "relevant_documents": {"1": ["193"]}},
            {
                "placeholders": {"$query": "star wars"},
                "relevant_documents": {"2": ["13532", "1895"], "0.5": ["12180"]},
            },
            {"placeholders": {"$query": "nothing rated"}, "relevant_documents": {}},
        ],
    }
    answer = _import(api, case_id, grade_keyed)
    assert answer.status_code == 200, answer.text
    assert _ratings(api, case_id) == {
        "star trek": {"193": 1.0},
        "star wars": {"13532": 2.0, "1895": 2.0, "12180": 0.5},
        "nothing rated": {},
    }


def test_rre_export_then_import_gives_the_same_ratings(api: ApiUser) -> None:
    case_id = _case(api)
    ids = add_queries(api, case_id, ['star "wars"', "alien", "unrated"])
    _rate(api, case_id, ids['star "wars"'], {"11": 3, "1891": 0.5, "a b": 2})
    _rate(api, case_id, ids["alien"], {"348": 1, "349": 0})
    exported = _export(api, case_id, "rre").text
    other = _case(api)
    answer = _import(api, other, exported)
    assert answer.status_code == 200, answer.text
    assert _ratings(api, other) == _ratings(api, case_id)
    assert [q["text"] for q in api.get(f"/api/v1/cases/{other}/queries").json()] == [
        'star "wars"',
        "alien",
        "unrated",
    ]
    assert _export(api, other, "rre").text == exported.replace(
        f'"index": "{_name(api, case_id)}"', f'"index": "{_name(api, other)}"'
    )


def _name(api: ApiUser, case_id: int) -> str:
    return str(api.get(f"/api/v1/cases/{case_id}").json()["name"])


def test_bad_rre_files_are_422_with_the_path_and_write_nothing(api: ApiUser) -> None:
    case_id = _case(api)
    bad = json.loads(json.dumps(RRE_FILE))
    groups = bad["topics"][0]["query_groups"]
    groups[0]["relevant_documents"]["g2"] = {"gain": 7}  # outside 0-3
    groups[1]["queries"].append({"template": "q.json", "placeholders": {"$other": "x"}})
    answer = _import(api, case_id, bad)
    assert answer.status_code == 422
    messages = [e["message"] for e in answer.json()["errors"]]
    assert messages == [
        "topics[0].query_groups[0].relevant_documents.g2: "
        "the rating 7 is outside the scorer's scale [0, 3]",
        "topics[0].query_groups[0].relevant_documents.g2: "
        "the rating 7 is outside the scorer's scale [0, 3]",
        'topics[0].query_groups[1].queries[1].placeholders: the query has no "$query" placeholder',
    ]
    assert api.get(f"/api/v1/cases/{case_id}/queries").json() == []
    for body, needle in (
        ("{not json", "not valid JSON"),
        ("[1, 2]", '"topics"'),
        ({"queries": [{"placeholders": {"$query": "q"}, "relevant_documents": 3}]}, "object"),
    ):
        answer = _import(api, case_id, body)
        assert answer.status_code == 422, body
        assert needle in answer.json()["errors"][0]["message"], body

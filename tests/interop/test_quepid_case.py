"""Quepid case exports: import (all shapes Quepid has written), bad input, export round trip."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case, Query, Rating, Scorer, SearchEndpoint
from tests.fixtures.users import ApiUser
from tests.support.quepid import FIXTURES as FIXTURES
from tests.support.quepid import IMPORT as IMPORT
from tests.support.quepid import JSON_TYPE as JSON_TYPE
from tests.support.quepid import export as export
from tests.support.quepid import fixture as fixture
from tests.support.quepid import imported as imported
from tests.support.quepid import post as post
from tests.support.quepid import queries_of as queries_of
from tests.support.quepid import with_code as with_code

MB = 1024 * 1024
REPORT_KEYS = (
    "queries_created",
    "ratings_set",
    "search_endpoint_created",
    "search_endpoint_name",
    "search_endpoint_url",
    "search_endpoint_reachable",
    "scorer_name",
    "scorer_created",
    "warnings",
)


def ratings_of(api: ApiUser, case_id: int, query_id: int) -> dict[str, float]:
    answer = api.get(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings").json()
    return {r["doc_id"]: r["rating"] for r in answer["ratings"]}


def counts(factory: sessionmaker[Session]) -> tuple[int, ...]:
    with session_scope(factory) as session:
        return tuple(
            session.scalar(select(func.count()).select_from(model)) or 0
            for model in (Case, Query, Rating, Scorer, SearchEndpoint)
        )


# ------------------------------------------------------------------------------ import


def test_quepid_7_solr_export_becomes_a_case(api: ApiUser) -> None:
    result = imported(api, fixture("tmdb_solr_case_v7.json"))
    assert result["name"] == "TMDB edismax"
    assert result["query_template"] == (
        "q=#$query##&defType=edismax&qf=text^##one## catch_line^##two##&tie=##tieBreaker##"
    )
    # sub: and media: fields are shown as plain fields; curator variables become knobs
    # (a variable the template does not use is dropped, a knob without one starts at 10).
    assert result["field_spec"] == "id:id title:title overview trailer_url"
    assert result["knobs"] == {"one": 1.0, "two": 2.5, "tieBreaker": 10.0}
    assert result["rows"] == 20
    assert result["options"] == {}
    assert result["warnings"] == []
    assert (result["queries_created"], result["ratings_set"]) == (2, 3)
    assert result["search_endpoint_created"] is True and result["scorer_created"] is True

    endpoint = api.get(f"/api/v1/search-endpoints/{result['search_endpoint_id']}").json()
    assert endpoint["engine"] == "solr"
    assert endpoint["url"] == "http://127.0.0.1:9/solr/tmdb/select"
    assert endpoint["method"] == "GET"  # Quepid's JSONP
    assert endpoint["header_names"] == ["Authorization"]
    assert endpoint["has_basic_auth"] is False

    scorer = api.get(f"/api/v1/scorers/{result['scorer_id']}").json()
    assert scorer["name"] == "Perfect in top 5"
    assert scorer["kind"] == "javascript"
    assert scorer["scale"] == [1.0, 2.0, 3.0, 4.0]
    assert scorer["code"].startswith("var k = 5;")

    queries = queries_of(api, result["id"])
    assert [q["text"] for q in queries] == ["First Query", "Second Query"]
    first, second = queries
    assert first["options"] == {"lang": "en"}  # Quepid 7 kept options as JSON text
    assert first["information_need"] == "I am the first query"
    assert second["notes"] == "Ask the catalogue team"
    assert ratings_of(api, result["id"], first["id"]) == {"doca": 3.0, "docb": 1.0}
    assert ratings_of(api, result["id"], second["id"]) == {"l_1234": 4.0}
    listed = api.get("/api/v1/cases").json()
    assert [c["id"] for c in listed] == [result["id"]]


def test_a_second_import_reuses_the_endpoint_and_the_identical_scorer(
    api: ApiUser, other_api: ApiUser
) -> None:
    data = fixture("tmdb_solr_case_v7.json")
    theirs = imported(other_api, data)
    first = imported(api, data)
    second = imported(api, data)
    assert second["id"] != first["id"]
    assert second["search_endpoint_id"] == first["search_endpoint_id"]
    assert second["scorer_id"] == first["scorer_id"]
    assert second["search_endpoint_created"] is False and second["scorer_created"] is False
    # Another user's endpoint and scorer are never reused.
    assert theirs["search_endpoint_id"] != first["search_endpoint_id"]
    assert theirs["scorer_id"] != first["scorer_id"]
    # Changed code is another scorer.
    data["scorer"]["code"] += "\n// tuned"
    third = imported(api, data)
    assert third["scorer_id"] != first["scorer_id"] and third["scorer_created"] is True
    names = [s["name"] for s in api.get("/api/v1/scorers").json() if not s["builtin"]]
    assert names == ["Perfect in top 5", "Perfect in top 5"]


def test_elasticsearch_search_url_becomes_the_index_url(api: ApiUser) -> None:
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    data["try"]["search_endpoint"]["endpoint_url"] = "https://es.example.com:9243/tmdb/_search/"
    data["try"]["search_endpoint"]["search_engine"] = "es"
    data["try"]["search_endpoint"]["basic_auth_credential"] = "reader:s3cret"
    data["try"]["search_endpoint"]["custom_headers"] = {"X-Team": "search"}
    result = imported(api, data)
    endpoint = api.get(f"/api/v1/search-endpoints/{result['search_endpoint_id']}").json()
    assert endpoint["engine"] == "elasticsearch"
    assert endpoint["url"] == "https://es.example.com:9243/tmdb"
    assert endpoint["name"] == "Movies on OpenSearch"
    assert endpoint["has_basic_auth"] is True and endpoint["header_names"] == ["X-Team"]
    assert result["field_spec"] == "id:_id title:title director genre thumb:poster_url"
    assert result["knobs"] == {"titleBoost": 10.0}
    assert result["options"] == {"collection": "movies"}
    queries = queries_of(api, result["id"])
    assert [q["text"] for q in queries] == ["star wars", "batman", "toy story"]
    assert queries[0]["options"] == {"genre": "Adventure"}
    assert queries[0]["notes"] == "The Clone Wars is the animated film; still relevant."
    # A null rating is Quepid's "not rated yet": not imported.
    assert ratings_of(api, result["id"], queries[1]["id"]) == {
        "149": 1.0,
        "146": 1.0,
        "147": 0.0,
        "1265": 1.0,
    }
    assert result["ratings_set"] == 9 + 4


def test_an_existing_endpoint_with_that_engine_and_url_is_reused(api: ApiUser) -> None:
    made = api.post(
        "/api/v1/search-endpoints",
        json={"name": "mine", "engine": "opensearch", "url": "http://127.0.0.1:9200/movies/"},
    ).json()
    result = imported(api, with_code(fixture("movies_es_case.json"), [0, 1]))
    assert result["search_endpoint_id"] == made["id"]
    assert result["search_endpoint_created"] is False
    # Credentials in Quepid's URL become basic auth: the URL is still the same one.
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    url = "http://reader:pw@127.0.0.1:9200/movies/_search"
    data["try"]["search_endpoint"]["endpoint_url"] = url
    assert imported(api, data)["search_endpoint_id"] == made["id"]
    # The same URL on another engine is another endpoint.
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    data["try"]["search_endpoint"]["search_engine"] = "es"
    data["try"]["search_endpoint"]["endpoint_url"] = url
    other = imported(api, data)
    assert other["search_endpoint_id"] != made["id"]
    endpoint = api.get(f"/api/v1/search-endpoints/{other['search_endpoint_id']}").json()
    assert endpoint["url"] == "http://127.0.0.1:9200/movies" and endpoint["has_basic_auth"]


def test_older_shapes_wrapping_and_duplicate_queries(api: ApiUser) -> None:
    # Curator variables as an object, ratings as doc -> rating, the try's own search_url,
    # and the body of Quepid's own import endpoint ({"case": ...}).
    data = {
        "case": {
            "case_name": "  Old shape  ",
            "scorer": {"name": "Mine", "code": "setScore(1);", "scale": "0, 1, 2, 3"},
            "queries": [
                {"query_text": "alien", "ratings": {"348": 3, "679": "2"}},
                {"query_text": " alien ", "notes": "again", "ratings": {"348": 1}},
            ],
            "try": {
                "query_params": '{"query": {"match": {"title": "#$query##"}}, "b": ##boost##}',
                "search_url": "http://127.0.0.1:9200/movies/_search?timeout=5s",
                "search_engine": "es",
                "curator_vars": {"boost": "2.5"},
            },
        }
    }
    result = imported(api, data)
    assert result["name"] == "Old shape"
    assert result["knobs"] == {"boost": 2.5}
    assert result["field_spec"] == "id:_id title:title"  # none given: the engine's default
    endpoint = api.get(f"/api/v1/search-endpoints/{result['search_endpoint_id']}").json()
    assert endpoint["url"] == "http://127.0.0.1:9200/movies?timeout=5s"
    scorer = api.get(f"/api/v1/scorers/{result['scorer_id']}").json()
    assert scorer["scale"] == [0.0, 1.0, 2.0, 3.0]
    (query,) = queries_of(api, result["id"])
    assert query["notes"] == "again"
    assert ratings_of(api, result["id"], query["id"]) == {"348": 1.0, "679": 2.0}
    assert result["warnings"] == [
        "1 queries repeat the text of an earlier one: each was merged into the first "
        "(its ratings win over the earlier ones for the same document)."
    ]


def test_unknown_scorer_without_code(api: ApiUser) -> None:
    data = fixture("tmdb_solr_case_v7.json")
    data["scorer"] = {"name": "Our secret scorer"}
    # Ratings 1-4 fit Classic's 1-10: imported with Classic, and the answer says so.
    result = imported(api, data)
    classic = next(s for s in api.get("/api/v1/scorers").json() if s["name"] == "Classic")
    assert result["scorer_id"] == classic["id"] and result["scorer_created"] is False
    assert result["warnings"] == [
        'The Quepid scorer "Our secret scorer" is not one of Quepid\'s shipped scorers and the '
        'file does not carry its code: the case is scored with "Classic". Create a JavaScript '
        "scorer with its code (environment quepid) and choose it in the case's settings to "
        "get Quepid's numbers."
    ]
    # A scorer of the user's with that name is used instead.
    mine = api.post(
        "/api/v1/scorers",
        json={
            "name": "Our secret scorer",
            "kind": "javascript",
            "code": "pass();",
            "scale": [1, 4],
        },
    ).json()
    again = imported(api, data)
    assert again["scorer_id"] == mine["id"] and again["warnings"] == []


def test_ratings_off_the_scale_write_nothing(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    before = counts(session_factory)
    data = with_code(fixture("tmdb_solr_case_v7.json"), [0, 1])
    answer = post(api, data)
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", "queries", 0, "ratings"]
    assert error["msg"] == (
        '2 ratings are outside the scale of the scorer "Mine" (0-1): "First Query" / doca: 3; '
        '"Second Query" / l_1234: 4. Nothing was imported.'
    )
    # The scorer was written before the ratings were checked: rolled back with the rest.
    assert counts(session_factory) == before


# ----------------------------------------------------------------------------- bad input


def _without(data: dict[str, Any], *path: str | int) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    target: Any = changed
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]
    return changed


@pytest.mark.parametrize(
    ("path", "named"),
    [
        (("case_name",), ["case_name"]),
        (("scorer",), ["scorer"]),
        (("scorer", "name"), ["scorer", "name"]),
        (("queries",), ["queries"]),
        (("try",), ["try"]),
        (("try", "query_params"), ["try", "query_params"]),
        (("try", "search_endpoint"), ["try", "search_endpoint"]),
        (("try", "search_endpoint", "endpoint_url"), ["try", "search_endpoint", "endpoint_url"]),
        (("try", "search_endpoint", "search_engine"), ["try", "search_endpoint", "search_engine"]),
        (("queries", 1, "query_text"), ["queries", 1, "query_text"]),
        (("queries", 0, "ratings", 2, "doc_id"), ["queries", 0, "ratings", 2, "doc_id"]),
    ],
)
def test_a_missing_key_is_named(
    api: ApiUser,
    session_factory: sessionmaker[Session],
    path: tuple[str | int, ...],
    named: list[str | int],
) -> None:
    before = counts(session_factory)
    answer = post(api, _without(fixture("movies_es_case.json"), *path))
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", *named]
    dotted = ".".join(str(p) for p in named).replace(".1.", "[1].").replace(".0.", "[0].")
    dotted = dotted.replace(".2.", "[2].")
    assert error["msg"] == f'This is not a Quepid case export: "{dotted}" is missing.'
    assert counts(session_factory) == before


def test_the_first_missing_key_is_named(api: ApiUser) -> None:
    answer = post(api, {"queries": [], "name": "not a case"})
    assert answer.json()["detail"][0]["msg"] == (
        'This is not a Quepid case export: "case_name" is missing.'
    )
    # A Quepid ratings export is JSON but not a case export.
    ratings_export = {"queries": [{"query": "star wars", "ratings": {"2906": 1}}]}
    assert post(api, ratings_export).json()["detail"][0]["loc"] == ["body", "case_name"]


@pytest.mark.parametrize(
    ("body", "loc", "message"),
    [
        (b"", ["body"], "The file is empty; export the case from Quepid and upload that file."),
        (
            b'{"case_name": "x",',
            ["body"],
            "The file is not valid JSON: Expecting property name enclosed in double quotes "
            "at line 1, column 19.",
        ),
        (b"\xff\xfe{}", ["body"], "The file is not UTF-8 text (byte 0)."),
        (b'{"case_name": NaN}', ["body"], "The file is not valid JSON: NaN is not a JSON number."),
        (
            b"[1, 2]",
            ["body"],
            "This is not a Quepid case export: the file must hold a JSON object.",
        ),
        (b"[" * 100_000, ["body"], None),
    ],
)
def test_what_is_not_json(api: ApiUser, body: bytes, loc: list[str], message: str | None) -> None:
    answer = post(api, body)
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["detail"]
    assert error["loc"] == loc
    if message is not None:
        assert error["msg"] == message
    else:
        assert error["msg"].startswith("The file is not valid JSON")


def _changed(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    target: Any = data
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "loc", "message"),
    [
        (("queries",), {"a": 1}, ["queries"], '"queries" must be a list in a Quepid case export.'),
        (
            ("queries", 0, "ratings", 0, "rating"),
            "good",
            ["queries", 0, "ratings", 0, "rating"],
            '"queries[0].ratings[0].rating" must be a number in a Quepid case export.',
        ),
        (
            ("try", "search_endpoint", "search_engine"),
            "vectara",
            ["try", "search_endpoint", "search_engine"],
            "Relevo searches Solr, Elasticsearch, OpenSearch, Vespa, search APIs and result "
            'files; this case uses a "vectara" endpoint, which Relevo cannot search.',
        ),
        (
            ("try", "search_endpoint", "endpoint_url"),
            "ftp://example.com/x",
            ["try", "search_endpoint", "endpoint_url"],
            '"try.search_endpoint.endpoint_url" must be an http:// or https:// URL in a Quepid '
            "case export.",
        ),
        (
            ("try", "query_params"),
            '{"query": {"match": "#$query##"}',
            ["try", "query_params"],
            None,
        ),
        (
            ("queries", 2, "query_text"),
            "x" * 1001,
            ["queries", 2, "query_text"],
            "Query 3 is longer than 1000 characters, the longest query Relevo keeps.",
        ),
        (
            ("queries", 0, "notes"),
            "nul \u0000 inside",
            ["queries", 0, "notes"],
            '"queries[0].notes" contains a NUL character or an unpaired surrogate.',
        ),
        (
            ("try", "number_of_rows"),
            0,
            ["try", "number_of_rows"],
            '"try.number_of_rows" must be a positive whole number in a Quepid case export.',
        ),
    ],
)
def test_wrong_values_are_named(
    api: ApiUser,
    session_factory: sessionmaker[Session],
    path: tuple[str | int, ...],
    value: Any,
    loc: list[str | int],
    message: str | None,
) -> None:
    before = counts(session_factory)
    answer = post(api, _changed(path, value))
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", *loc]
    if message is not None:
        assert error["msg"] == message
    else:
        assert error["msg"].startswith("Relevo cannot use the try's try.query_params: ")
    assert counts(session_factory) == before


def test_an_upload_over_the_body_limit_is_413(api: ApiUser) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"case_name": "'
        for _ in range(200):
            yield b"x" * MB
        yield b'"}'

    answer = api.post(IMPORT, content=chunks(), headers=JSON_TYPE)
    assert answer.status_code == 413
    assert answer.json() == {"detail": "The request body is larger than 10 MB."}
    declared = api.post(
        IMPORT, content=b"{}", headers={**JSON_TYPE, "Content-Length": str(200 * MB)}
    )
    assert declared.status_code == 413


def test_multipart_upload_and_unauthenticated(api: ApiUser) -> None:
    body = json.dumps(fixture("tmdb_solr_case_v7.json")).encode()
    answer = api.post(IMPORT, files={"file": ("case.json", body, "application/json")})
    assert answer.status_code == 201, answer.text
    wrong_field = api.post(IMPORT, files={"upload": ("case.json", body, "application/json")})
    assert wrong_field.status_code == 400
    assert api.client.post(IMPORT, content=body, headers=JSON_TYPE).status_code == 401


# ------------------------------------------------------------------------------ export


def test_export_is_quepids_case_shape_and_round_trips(api: ApiUser) -> None:
    case = imported(api, fixture("tmdb_solr_case_v7.json"))
    out = export(api, case["id"])
    assert out == {
        "case_name": "TMDB edismax",
        "owner_email": "alice@example.com",
        "public": False,
        "archived": False,
        "options": {},
        "scorer": {
            "name": "Perfect in top 5",
            "code": fixture("tmdb_solr_case_v7.json")["scorer"]["code"],
            "scale": [1, 2, 3, 4],
            "max_score": 100,
            "environment": "quepid",
            # Quepid has no scorer of that name: the file says to create it there first.
            "quepid_scorer_to_create": (
                "Quepid has no scorer that gives these numbers. Before importing this file "
                'into Quepid, create a scorer named "Perfect in top 5" there with this code '
                'and scale: the scorer "Perfect in top 5", whose code runs unchanged in Quepid.'
            ),
        },
        "try": {
            "escape_query": False,
            "field_spec": "id:id title:title overview trailer_url",
            "name": "Try 1",
            "number_of_rows": 20,
            "query_params": (
                "q=#$query##&defType=edismax&qf=text^##one## catch_line^##two##&tie=##tieBreaker##"
            ),
            "curator_variables": [
                {"name": "one", "value": 1},
                {"name": "two", "value": 2.5},
                {"name": "tieBreaker", "value": 10},
            ],
            "search_endpoint": {
                "name": "Solr http://127.0.0.1:9/solr/tmdb/select",
                "endpoint_url": "http://127.0.0.1:9/solr/tmdb/select",
                "search_engine": "solr",
                "api_method": "GET",
                "custom_headers": None,
                "basic_auth_credential": None,
                "requests_per_minute": 0,
            },
        },
        "queries": [
            {
                "arranged_at": 1,
                "arranged_next": None,
                "query_text": "First Query",
                "options": {"lang": "en"},
                "notes": None,
                "information_need": "I am the first query",
                "ratings": [{"doc_id": "doca", "rating": 3}, {"doc_id": "docb", "rating": 1}],
            },
            {
                "arranged_at": 2,
                "arranged_next": None,
                "query_text": "Second Query",
                "options": None,
                "notes": "Ask the catalogue team",
                "information_need": "I am the second query",
                "ratings": [{"doc_id": "l_1234", "rating": 4}],
            },
        ],
    }
    again = imported(api, out)
    assert again["warnings"] == []
    assert again["scorer_id"] == case["scorer_id"]
    assert again["search_endpoint_id"] == case["search_endpoint_id"]
    for key in ("query_template", "field_spec", "rows", "knobs", "options"):
        assert again[key] == case[key]
    assert export(api, again["id"]) == out


def test_a_scorer_with_code_keeps_the_max_score_relevo_exported(api: ApiUser) -> None:
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    data["scorer"]["max_score"] = 1
    case = imported(api, data)
    scorer = api.get(f"/api/v1/scorers/{case['scorer_id']}").json()
    assert scorer["max_score"] == 1.0
    assert export(api, case["id"])["scorer"]["max_score"] == 1
    # The same code with another max_score is another scorer.
    data["scorer"]["max_score"] = 100
    assert imported(api, data)["scorer_id"] != case["scorer_id"]


def test_export_of_an_elasticsearch_case_writes_quepids_search_url(api: ApiUser) -> None:
    case = imported(api, with_code(fixture("movies_es_case.json"), [0, 1]))
    # A later try is what goes out; fractional ratings stay fractional.
    api.patch(f"/api/v1/cases/{case['id']}", json={"knobs": {"titleBoost": 4.5}})
    query_id = queries_of(api, case["id"])[2]["id"]
    api.put(
        f"/api/v1/cases/{case['id']}/queries/{query_id}/ratings",
        json={"ratings": [{"doc_id": "993", "rating": 0.5}]},
    )
    out = export(api, case["id"])
    endpoint = out["try"]["search_endpoint"]
    assert endpoint["endpoint_url"] == "http://127.0.0.1:9200/movies/_search"
    assert (endpoint["search_engine"], endpoint["api_method"]) == ("os", "POST")
    assert out["try"]["name"] == "Try 2"
    assert out["try"]["curator_variables"] == [{"name": "titleBoost", "value": 4.5}]
    assert out["queries"][2]["ratings"] == [{"doc_id": "993", "rating": 0.5}]
    assert [r["doc_id"] for r in out["queries"][0]["ratings"]] == sorted(
        ["2906", "3097", "2884", "773", "913", "2845", "2846", "555", "1891"]
    )


def test_export_of_another_users_case_is_404(api: ApiUser, other_api: ApiUser) -> None:
    case = imported(api, fixture("tmdb_solr_case_v7.json"))
    assert other_api.get(f"/api/v1/cases/{case['id']}/export").status_code == 404
    assert api.get(f"/api/v1/cases/{case['id']}/export?format=csv").status_code == 422


# ------------------------------------------------------------------ Quepid's shipped scorers


def test_a_shipped_scorer_name_gets_quepids_scorer_not_the_preset(api: ApiUser) -> None:
    from app.scoring.quepid_scorers import shipped_scorer

    shipped = shipped_scorer("AP@10")
    assert shipped is not None
    data = fixture("movies_es_case.json")
    data["scorer"] = {"name": "AP@10"}
    case = imported(api, data)
    assert case["warnings"] == [] and case["scorer_created"] is True
    preset = next(
        s for s in api.get("/api/v1/scorers").json() if s["builtin"] and s["name"] == "AP@10"
    )
    assert case["scorer_id"] != preset["id"]
    scorer = api.get(f"/api/v1/scorers/{case['scorer_id']}").json()
    assert scorer["kind"] == "javascript" and scorer["environment"] == "quepid"
    # Named so that it is not taken for the built-in AP@10, which computes another number.
    assert scorer["name"] == "AP@10 (Quepid)" == case["scorer_name"]
    assert scorer["code"] == shipped.code
    assert scorer["scale"] == [float(v) for v in shipped.scale]
    assert scorer["max_score"] == shipped.max_score
    # Made once: the next case named after it gets the same scorer.
    again = imported(api, data)
    assert again["scorer_id"] == case["scorer_id"] and again["scorer_created"] is False
    # Exported under Quepid's name with its code, and that imports to the same scorer again.
    out = export(api, case["id"])
    assert out["scorer"]["name"] == "AP@10" and out["scorer"]["environment"] == "quepid"
    assert imported(api, out)["scorer_id"] == case["scorer_id"]
    # So does a file carrying Relevo's name for it.
    data["scorer"] = {"name": "AP@10 (Quepid)"}
    assert imported(api, data)["scorer_id"] == case["scorer_id"]


def test_a_scorer_imported_under_quepids_own_name_is_reused(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    """Databases from before the " (Quepid)" names keep their scorer and its name."""
    from app.scoring.quepid_scorers import shipped_scorer

    shipped = shipped_scorer("NDCG@10")
    assert shipped is not None
    with session_scope(session_factory) as session:
        older = Scorer(
            owner_id=api.id,
            name="NDCG@10",
            kind="javascript",
            params={},
            code=shipped.code,
            scale=[float(v) for v in shipped.scale],
            scale_labels=dict(shipped.labels),
            max_score=float(shipped.max_score),
            environment="quepid",
        )
        session.add(older)
        session.commit()
        older_id = older.id
    data = fixture("movies_es_case.json")
    data["scorer"] = {"name": "NDCG@10"}
    case = imported(api, data)
    assert (case["scorer_id"], case["scorer_created"]) == (older_id, False)
    assert case["scorer_name"] == "NDCG@10"
    assert imported(api, export(api, case["id"]))["scorer_id"] == older_id
    # Another shipped scorer is made under the new name.
    data["scorer"] = {"name": "ERR@10"}
    assert imported(api, data)["scorer_name"] == "ERR@10 (Quepid)"


def test_the_import_says_what_it_did(api: ApiUser) -> None:
    data = fixture("movies_es_case.json")
    data["scorer"] = {"name": "P@10"}
    first = imported(api, data)
    assert {key: first[key] for key in REPORT_KEYS} == {
        "queries_created": 3,
        "ratings_set": 13,
        "search_endpoint_created": True,
        "search_endpoint_name": "Movies on OpenSearch",
        "search_endpoint_url": "http://127.0.0.1:9200/movies",
        "search_endpoint_reachable": False,
        "scorer_name": "P@10 (Quepid)",
        "scorer_created": True,
        "warnings": [],
    }
    # Nothing listens there: the import stands and says why the endpoint did not answer.
    assert first["search_endpoint_problem"] == "cannot connect to http://127.0.0.1:9200/movies"
    assert api.get(f"/api/v1/cases/{first['id']}").status_code == 200
    again = imported(api, data)
    assert again["search_endpoint_created"] is False and again["scorer_created"] is False
    assert again["search_endpoint_name"] == "Movies on OpenSearch"


def test_scorer_code_keeps_its_environment(api: ApiUser) -> None:
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    assert (
        api.get(f"/api/v1/scorers/{imported(api, data)['scorer_id']}").json()["environment"]
        == "quepid"
    )
    data["scorer"]["environment"] = "relevo"  # what Relevo exports of a relevo scorer
    relevo = imported(api, data)
    scorer = api.get(f"/api/v1/scorers/{relevo['scorer_id']}").json()
    assert scorer["environment"] == "relevo"
    assert export(api, relevo["id"])["scorer"]["environment"] == "relevo"
    data["scorer"]["environment"] = "browser"
    answer = post(api, data)
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "scorer", "environment"]

"""Cases, tries, queries and ratings over the API."""

from __future__ import annotations

from tests.fixtures.users import ApiUser
from tests.support.api import (
    FIELD_SPEC,
    MOVIES_TEMPLATE,
    add_queries,
    make_case,
    make_endpoint,
    scorer_id,
)

URL = "http://127.0.0.1:9/movies"


def test_create_case_uses_classic_and_try_1(api: ApiUser) -> None:
    endpoint = make_endpoint(api, URL)
    case = make_case(api, endpoint["id"])
    assert case["try_number"] == 1
    assert case["scorer_id"] == scorer_id(api, "Classic")
    assert (case["rows"], case["field_spec"], case["options"]) == (10, FIELD_SPEC, {})
    assert case["knobs"] == {"titleBoost": 10.0}
    assert api.get(f"/api/v1/cases/{case['id']}").json() == case
    listed = api.get("/api/v1/cases").json()
    assert [c["id"] for c in listed] == [case["id"]] and listed[0]["last_score"] is None


def test_search_settings_changes_start_a_new_try(api: ApiUser) -> None:
    endpoint = make_endpoint(api, URL)
    case = make_case(api, endpoint["id"])
    path = f"/api/v1/cases/{case['id']}"
    renamed = api.patch(path, json={"name": "Renamed"}).json()
    assert renamed["try_number"] == 1 and renamed["name"] == "Renamed"
    rows = api.patch(path, json={"rows": 20}).json()
    assert rows["try_number"] == 2 and rows["rows"] == 20
    knob = api.patch(path, json={"knobs": {"titleBoost": 3}}).json()
    assert knob["try_number"] == 3 and knob["knobs"] == {"titleBoost": 3.0}
    same = api.patch(path, json={"rows": 20}).json()
    assert same["try_number"] == 3
    tries = api.get(path + "/tries").json()
    assert [t["number"] for t in tries] == [3, 2, 1]
    assert api.get(path + "/tries/1").json()["rows"] == 10


def test_bad_templates_and_field_specs_are_rejected_when_saved(api: ApiUser) -> None:
    endpoint = make_endpoint(api, URL)
    bad_json = api.post(
        "/api/v1/cases",
        json={
            "name": "x",
            "search_endpoint_id": endpoint["id"],
            "query_template": '{"query": {"match": {"title": "#$query##"}}',
        },
    )
    assert bad_json.status_code == 422
    assert bad_json.json()["detail"][0]["loc"] == ["body", "query_template"]
    unknown = api.post(
        "/api/v1/cases",
        json={
            "name": "x",
            "search_endpoint_id": endpoint["id"],
            "query_template": '{"query": {"match": {"title": "#$nonsense##"}}}',
        },
    )
    assert unknown.status_code == 422
    assert "nonsense" in unknown.json()["detail"][0]["msg"]
    bad_spec = api.post(
        "/api/v1/cases",
        json={
            "name": "x",
            "search_endpoint_id": endpoint["id"],
            "field_spec": "id:",
            "query_template": MOVIES_TEMPLATE,
        },
    )
    assert bad_spec.status_code == 422
    assert bad_spec.json()["detail"][0]["loc"] == ["body", "field_spec"]
    assert api.get("/api/v1/cases").json() == []


def test_foreign_and_unknown_ids_are_404(api: ApiUser, other_api: ApiUser) -> None:
    theirs = make_case(other_api, make_endpoint(other_api, URL)["id"])
    path = f"/api/v1/cases/{theirs['id']}"
    for response in (
        api.get(path),
        api.patch(path, json={"name": "x"}),
        api.delete(path),
        api.get(path + "/queries"),
        api.post(path + "/runs"),
        api.get("/api/v1/cases/999999"),
    ):
        assert response.status_code == 404
    own_endpoint = make_endpoint(api, URL)
    with_their_endpoint = api.post(
        "/api/v1/cases",
        json={
            "name": "x",
            "search_endpoint_id": theirs["search_endpoint_id"],
            "query_template": MOVIES_TEMPLATE,
        },
    )
    assert with_their_endpoint.status_code == 404
    mine = make_case(api, own_endpoint["id"])
    assert (
        api.patch(
            f"/api/v1/cases/{mine['id']}", json={"search_endpoint_id": theirs["search_endpoint_id"]}
        ).status_code
        == 404
    )
    assert other_api.get(path).status_code == 200


def test_queries_add_dedupe_bulk_update_delete(api: ApiUser) -> None:
    case = make_case(api, make_endpoint(api, URL)["id"])
    path = f"/api/v1/cases/{case['id']}/queries"
    first = api.post(path, json={"text": "star wars", "options": {"genre": "Adventure"}})
    assert first.status_code == 201
    again = api.post(path, json={"text": "  star wars "})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    ids = add_queries(api, case["id"], ["batman", "", "star wars", "batman", "alien"])
    assert list(ids) == ["batman", "star wars", "alien"]
    listed = api.get(path).json()
    assert [q["text"] for q in listed] == ["star wars", "batman", "alien"]
    assert [q["position"] for q in listed] == [0, 1, 2]
    patched = api.patch(f"{path}/{ids['alien']}", json={"notes": "sci-fi", "text": "aliens"})
    assert patched.json()["text"] == "aliens" and patched.json()["notes"] == "sci-fi"
    clash = api.patch(f"{path}/{ids['batman']}", json={"text": "aliens"})
    assert clash.status_code == 409
    assert api.delete(f"{path}/{ids['batman']}").status_code == 204
    assert [q["text"] for q in api.get(path).json()] == ["star wars", "aliens"]
    assert api.post(path, json={"text": "   "}).status_code == 422


def test_bulk_with_ten_thousand_queries(api: ApiUser) -> None:
    case = make_case(api, make_endpoint(api, URL)["id"])
    texts = [f"query {i}" for i in range(10_000)]
    ids = add_queries(api, case["id"], texts)
    assert len(ids) == 10_000
    assert api.get(f"/api/v1/cases/{case['id']}").json()["query_count"] == 10_000
    again = add_queries(api, case["id"], [*texts[:10], "one more"])
    assert len(again) == 11 and again["query 3"] == ids["query 3"]


def test_ratings_upsert_delete_and_range(api: ApiUser) -> None:
    case = make_case(api, make_endpoint(api, URL)["id"], scorer_id=scorer_id(api, "NDCG@10"))
    query_id = add_queries(api, case["id"], ["star wars"])["star wars"]
    path = f"/api/v1/cases/{case['id']}/queries/{query_id}/ratings"
    put = api.put(
        path, json={"ratings": [{"doc_id": "a", "rating": 3}, {"doc_id": "b", "rating": 1.5}]}
    )
    assert put.status_code == 200
    assert put.json()["query_score"] is None
    api.put(path, json={"ratings": [{"doc_id": "a", "rating": 2}, {"doc_id": "b", "rating": None}]})
    (rating,) = api.get(path).json()["ratings"]
    assert (rating["doc_id"], rating["rating"]) == ("a", 2.0)
    assert rating["rated_by"] == {"user_id": api.id, "email": "alice@example.com"}
    too_high = api.put(path, json={"ratings": [{"doc_id": "c", "rating": 4}]})
    assert too_high.status_code == 422
    assert too_high.json()["detail"][0]["loc"] == ["body", "ratings", 0, "rating"]
    negative = api.put(path, json={"ratings": [{"doc_id": "c", "rating": -1}]})
    assert negative.status_code == 422
    assert [(r["doc_id"], r["rating"]) for r in api.get(path).json()["ratings"]] == [("a", 2.0)]


def test_deleting_a_case_removes_it(api: ApiUser) -> None:
    case = make_case(api, make_endpoint(api, URL)["id"])
    add_queries(api, case["id"], ["a", "b"])
    assert api.delete(f"/api/v1/cases/{case['id']}").status_code == 204
    assert api.get(f"/api/v1/cases/{case['id']}").status_code == 404

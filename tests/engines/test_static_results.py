"""Result-file endpoints: TREC runs and CSVs uploaded, then run, scored and compared."""

from __future__ import annotations

import io
from typing import Any

import pytest
import pytrec_eval

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, scorer_id


def _static_endpoint(api: ApiUser) -> int:
    response = api.post("/api/v1/search-endpoints", json={"name": "offline", "engine": "static"})
    assert response.status_code == 201, response.text
    assert response.json()["url"] == ""
    assert response.json()["has_results"] is False
    return int(response.json()["id"])


def _upload(api: ApiUser, endpoint_id: int, text: str, fmt: str = "trec") -> Any:
    return api.put(
        f"/api/v1/search-endpoints/{endpoint_id}/results",
        params={"format": fmt},
        content=text.encode(),
        headers={"Content-Type": "text/plain"},
    )


def _rate(api: ApiUser, case_id: int, query_id: int, ratings: dict[str, int]) -> None:
    body = {"ratings": [{"doc_id": d, "rating": r} for d, r in ratings.items()]}
    response = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
    assert response.status_code == 200, response.text


def _run(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
    assert response.status_code == 200, response.text
    run: dict[str, Any] = response.json()
    assert run["status"] == "finished", run
    return run


@pytest.mark.runner
def test_a_trec_run_is_ranked_as_trec_eval_ranks_it_and_scores_as_pytrec_eval(
    api: ApiUser,
) -> None:
    endpoint_id = _static_endpoint(api)
    case_id = int(
        make_case(api, endpoint_id, scorer_id=scorer_id(api, "NDCG@10"), field_spec="id:id")["id"]
    )
    ids = add_queries(api, case_id, ["star wars", "alien", "not in the file"])
    wars, alien = str(ids["star wars"]), str(ids["alien"])
    # The RANK column and line order disagree with the scores on purpose: trec_eval ignores
    # both and ranks by SCORE descending, then DOCNO descending ("d3" before "d1" at 2.0).
    run_text = "\n".join(
        [
            f"{wars} Q0 d1 1 2.0 sys",
            f"{wars} Q0 d2 2 5.5 sys",
            f"{wars} Q0 d3 3 2.0 sys",
            f"{wars} Q0 d4 4 -1 sys",
            "alien Q0 a9 1 0.25 sys",  # a QID that is the query's text
            "alien Q0 a10 2 0.5 sys",
            "",
        ]
    )
    response = _upload(api, endpoint_id, run_text)
    assert response.status_code == 200, response.text
    assert response.json() == {"queries": 2, "docs": 6, "replaced": False}
    _rate(api, case_id, ids["star wars"], {"d1": 3, "d2": 0, "d3": 1, "d9": 2})
    _rate(api, case_id, ids["alien"], {"a9": 2})

    run = _run(api, case_id)
    by_text = {q["text"]: q for q in run["queries"]}
    assert [d["id"] for d in by_text["star wars"]["docs"]] == ["d2", "d3", "d1", "d4"]
    assert [d["id"] for d in by_text["alien"]["docs"]] == ["a10", "a9"]
    assert by_text["star wars"]["num_found"] == 4
    assert by_text["not in the file"]["num_found"] == 0
    assert by_text["not in the file"]["docs"] == []

    qrels = {wars: {"d1": 3, "d2": 0, "d3": 1, "d9": 2}, alien: {"a9": 2}}
    pytrec_run = pytrec_eval.parse_run(io.StringIO(run_text.replace("alien Q0", f"{alien} Q0")))
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(pytrec_run)
    for text, qid in (("star wars", wars), ("alien", alien)):
        assert by_text[text]["status"] == "scored"
        assert by_text[text]["score"] == pytest.approx(measured[qid]["ndcg_cut_10"] * 100)
    assert 0 < by_text["star wars"]["score"] < 100


@pytest.mark.runner
def test_a_csv_is_ranked_by_rank_with_its_extra_columns_as_fields(api: ApiUser) -> None:
    endpoint_id = _static_endpoint(api)
    case_id = int(make_case(api, endpoint_id, field_spec="id:id title", rows=2)["id"])
    add_queries(api, case_id, ['star "wars"', "alien"])
    csv_text = (
        "query,docid,rank,title\n"
        '"star ""wars""",11,2,The Empire Strikes Back\n'
        '"star ""wars""",12,1,"A New Hope, again"\n'
        '"star ""wars""",13,3,Return of the Jedi\n'
        "alien,7,1,\n"
    )
    response = _upload(api, endpoint_id, csv_text, "csv")
    assert response.status_code == 200, response.text
    assert response.json() == {"queries": 2, "docs": 4, "replaced": False}
    assert api.get(f"/api/v1/search-endpoints/{endpoint_id}").json()["has_results"] is True

    run = _run(api, case_id)
    wars = next(q for q in run["queries"] if q["text"] == 'star "wars"')
    # rows = 2 keeps the first two; num_found still counts every line of the query.
    assert [(d["id"], d["fields"].get("title")) for d in wars["docs"]] == [
        ("12", "A New Hope, again"),
        ("11", "The Empire Strikes Back"),
    ]
    assert wars["num_found"] == 3
    alien = next(q for q in run["queries"] if q["text"] == "alien")
    assert [d["id"] for d in alien["docs"]] == ["7"]

    # A new version of the file replaces the old one; a rerun compares the two systems.
    again = _upload(api, endpoint_id, 'query,docid,rank\n"star ""wars""",13,1\n', "csv")
    assert again.json() == {"queries": 1, "docs": 1, "replaced": True}
    second = _run(api, case_id)
    wars2 = next(q for q in second["queries"] if q["text"] == 'star "wars"')
    assert [d["id"] for d in wars2["docs"]] == ["13"]
    compared = api.get(
        f"/api/v1/cases/{case_id}/runs/compare", params={"base": run["id"], "other": second["id"]}
    )
    assert compared.status_code == 200, compared.text


@pytest.mark.runner
def test_quepids_static_result_file_is_read_with_its_fields(api: ApiUser) -> None:
    endpoint_id = _static_endpoint(api)
    case_id = int(make_case(api, endpoint_id, field_spec="id:id MovieTitle", rows=5)["id"])
    add_queries(api, case_id, ["star wars?", "alien"])
    # Quepid's static result file: its own header, a space after each comma.
    quepid_csv = (
        "Query Text,Doc ID,Doc Position, MovieTitle\n"
        "star wars?,527641,2, Star Wars\n"
        "star wars?,9426,1, The Empire Strikes Back\n"
        "alien,348,1, Alien\n"
    )
    response = _upload(api, endpoint_id, quepid_csv, "csv")
    assert response.status_code == 200, response.text
    assert response.json() == {"queries": 2, "docs": 3, "replaced": False}
    run = _run(api, case_id)
    wars = next(q for q in run["queries"] if q["text"] == "star wars?")
    assert [(d["id"], d["fields"]["MovieTitle"]) for d in wars["docs"]] == [
        ("9426", "The Empire Strikes Back"),
        ("527641", "Star Wars"),
    ]
    missing = _upload(api, endpoint_id, "Query Text,Doc ID\nx,1\n", "csv")
    assert missing.status_code == 422
    assert "Query Text,Doc ID,Doc Position" in missing.text


def test_bad_lines_are_listed_by_number_and_nothing_is_stored(api: ApiUser) -> None:
    endpoint_id = _static_endpoint(api)
    assert _upload(api, endpoint_id, "q1 Q0 d1 1 1.0 run\n").status_code == 200
    bad = "q1 Q0 d1 1 1.0 run\nq1 Q0 d2 x 1.0 run\n\nq1 Q0 d3 3 high run\nq2 d4 1 1.0\n"
    response = _upload(api, endpoint_id, bad)
    assert response.status_code == 422, response.text
    body = response.json()
    assert [e["line"] for e in body["errors"]] == [2, 4, 5]
    assert "RANK 'x'" in body["errors"][0]["message"]
    assert "SCORE 'high'" in body["errors"][1]["message"]
    assert "6 columns" in body["errors"][2]["message"]
    # The previous file is intact.
    tried = api.post(f"/api/v1/search-endpoints/{endpoint_id}/try", json={"query_text": "q1"})
    assert tried.status_code == 200, tried.text
    assert [d["id"] for d in tried.json()["docs"]] == ["d1"]

    no_header = _upload(api, endpoint_id, "q,d,r\nx,1,1\n", "csv")
    assert no_header.status_code == 422
    assert no_header.json()["errors"][0]["line"] == 1
    bad_rank = _upload(api, endpoint_id, "query,docid,rank\nx,1,0\nx,,2\n", "csv")
    assert [e["line"] for e in bad_rank.json()["errors"]] == [2, 3]
    assert _upload(api, endpoint_id, "").status_code == 422
    assert _upload(api, endpoint_id, "\xff\xfe").status_code in (200, 422)


def test_only_a_static_endpoint_takes_a_file_and_only_it_has_no_url(api: ApiUser) -> None:
    live = api.post(
        "/api/v1/search-endpoints",
        json={"name": "os", "engine": "opensearch", "url": "http://127.0.0.1:9/x"},
    ).json()
    response = _upload(api, live["id"], "q Q0 d 1 1 r\n")
    assert response.status_code == 422
    no_url = api.post("/api/v1/search-endpoints", json={"name": "v", "engine": "vespa"})
    assert no_url.status_code == 422
    other = api.post("/api/v1/search-endpoints", json={"name": "s", "engine": "static"}).json()
    assert api.get(f"/api/v1/search-endpoints/{other['id']}").status_code == 200


def test_another_users_static_endpoint_is_404(api: ApiUser, other_api: ApiUser) -> None:
    endpoint_id = _static_endpoint(api)
    assert _upload(other_api, endpoint_id, "q Q0 d 1 1 r\n").status_code == 404

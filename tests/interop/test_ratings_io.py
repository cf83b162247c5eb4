"""Ratings export (CSV, qrels, RRE, Quepid) and import (CSV, qrels), all or nothing."""

from __future__ import annotations

import io
from typing import Any

import pytest
import pytrec_eval

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.ratings_files import _case as _case
from tests.support.ratings_files import _export as _export
from tests.support.ratings_files import _rate as _rate

CSV_TYPE = {"Content-Type": "text/csv"}


def _rated_case(api: ApiUser) -> tuple[int, dict[str, int]]:
    case_id = _case(api)
    ids = add_queries(api, case_id, ['star "wars", the saga', "alien"])
    _rate(api, case_id, ids['star "wars", the saga'], {"11": 3, "1891": 0.5, "a,b": 2})
    _rate(api, case_id, ids["alien"], {"348": 1})
    return case_id, ids


def _import(api: ApiUser, case_id: int, body: bytes | str, fmt: str = "csv", **params: Any) -> Any:
    data = body.encode() if isinstance(body, str) else body
    return api.post(
        f"/api/v1/cases/{case_id}/ratings/import",
        params={"format": fmt, **params},
        content=data,
        headers=CSV_TYPE,
    )


def test_csv_export_quotes_and_writes_whole_ratings_as_integers(api: ApiUser) -> None:
    case_id, _ids = _rated_case(api)
    response = _export(api, case_id, "csv")
    assert response.headers["content-type"].startswith("text/csv")
    assert 'filename="case-' in response.headers["content-disposition"]
    assert response.text == (
        "query,docid,rating\r\n"
        '"star ""wars"", the saga",11,3\r\n'
        '"star ""wars"", the saga",1891,0.5\r\n'
        '"star ""wars"", the saga","a,b",2\r\n'
        "alien,348,1\r\n"
    )


def test_trec_rre_and_quepid_exports(api: ApiUser) -> None:
    case_id, ids = _rated_case(api)
    wars, alien = ids['star "wars", the saga'], ids["alien"]
    assert _export(api, case_id, "trec").text == (
        f"{wars} 0 11 3\n{wars} 0 1891 0.5\n{wars} 0 a,b 2\n{alien} 0 348 1\n"
    )
    assert _export(api, case_id, "rre").json() == {
        "id_field": "_id",
        "index": "Movies",
        "template": "template.json",
        "queries": [
            {
                "placeholders": {"$query": 'star "wars", the saga'},
                "relevant_documents": {"0.5": ["1891"], "2": ["a,b"], "3": ["11"]},
            },
            {"placeholders": {"$query": "alien"}, "relevant_documents": {"1": ["348"]}},
        ],
    }
    assert _export(api, case_id, "quepid").json() == {
        "queries": [
            {"query": 'star "wars", the saga', "ratings": {"11": 3.0, "1891": 0.5, "a,b": 2.0}},
            {"query": "alien", "ratings": {"348": 1.0}},
        ]
    }
    assert api.get(f"/api/v1/cases/{case_id}/ratings/export?format=xml").status_code == 422


def test_csv_round_trip_creates_the_queries_and_gives_back_the_same_file(api: ApiUser) -> None:
    case_id, _ids = _rated_case(api)
    exported = _export(api, case_id, "csv").text
    target = _case(api)
    add_queries(api, target, ["alien"])  # one query exists, the other is new
    answer = _import(api, target, exported)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "preview": False,
        "lines": 4,
        "queries_created": 1,
        "ratings_set": 4,
        "ratings_unchanged": 0,
        "duplicates": 0,
        "new_queries": ['star "wars", the saga'],
        "query_match": None,  # TREC only
        "qids_by_id": 0,
        "qids_by_text": 0,
    }
    texts = [q["text"] for q in api.get(f"/api/v1/cases/{target}/queries").json()]
    assert texts == ["alien", 'star "wars", the saga']
    # Export order follows query position: the new query comes after "alien".
    again = _export(api, target, "csv").text.splitlines()
    assert sorted(again) == sorted(exported.splitlines()) and again[1] == "alien,348,1"
    # The same file once more changes nothing.
    assert _import(api, target, exported).json()["ratings_unchanged"] == 4


def test_bom_crlf_quoted_newlines_duplicates_and_extra_columns(api: ApiUser) -> None:
    case_id = _case(api)
    body = (
        "\ufeffnote,Query,DocId,rating\r\n"
        'x,"two\r\nlines",d1,1\r\n'
        "y,alien,d2,2\r\n"
        "\r\n"
        "z,alien,d2,3\r\n"
    )
    answer = _import(api, case_id, body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["duplicates"] == 1 and answer.json()["ratings_set"] == 2
    queries = {q["text"]: q["id"] for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert set(queries) == {"two\r\nlines", "alien"}
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{queries['alien']}/ratings").json()[
        "ratings"
    ]
    assert {r["doc_id"]: r["rating"] for r in ratings} == {"d2": 3}  # the last line wins


def test_bad_lines_are_all_listed_and_nothing_is_written(api: ApiUser) -> None:
    case_id, ids = _rated_case(api)
    before = _export(api, case_id, "csv").text
    body = (
        "query,docid,rating\n"
        "alien,348,2\n"  # fine, but must not be written
        "new query,d1,abc\n"
        '"quoted, text",d2,7\n'
        "alien,,1\n"
        "alien,d3\n"
        "alien,d4,nan\n"
    )
    answer = _import(api, case_id, body)
    assert answer.status_code == 422
    result = answer.json()
    assert result["detail"].startswith("5 bad lines; nothing was imported")
    assert result["errors"] == [
        {"line": 3, "message": "the rating 'abc' is not a number"},
        {"line": 4, "message": "the rating 7 is outside the scorer's scale [0, 3]"},
        {"line": 5, "message": "the docid is empty"},
        {"line": 6, "message": "expected at least 3 columns, found 2"},
        {"line": 7, "message": "the rating 'nan' is not a finite number"},
    ]
    assert _export(api, case_id, "csv").text == before
    texts = {q["text"] for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert texts == set(ids)


def test_wrong_headers_delimiters_and_empty_files(api: ApiUser) -> None:
    case_id = _case(api)
    cases = {
        "q,doc,grade\nalien,1,1\n": "the header must name the columns query,docid,rating",
        "query;docid;rating\nalien;1;1\n": "it looks separated by semicolons: use commas",
        "query\tdocid\trating\n": "it looks separated by tabs",
        "": "the file is empty",
    }
    for body, expected in cases.items():
        answer = _import(api, case_id, body)
        assert answer.status_code == 422, body
        assert answer.json()["errors"][0]["line"] == 1
        assert expected in answer.json()["errors"][0]["message"], body
    not_utf8 = _import(api, case_id, b"query,docid,rating\nalien,1,\xff\n")
    assert not_utf8.status_code == 422 and "not UTF-8" in not_utf8.json()["detail"]


def test_preview_says_what_would_change_and_writes_nothing(api: ApiUser) -> None:
    case_id, ids = _rated_case(api)
    body = "query,docid,rating\nalien,348,1\nalien,349,2\nbrand new,x,1\n"
    answer = _import(api, case_id, body, preview="true")
    assert answer.status_code == 200
    assert answer.json() == {
        "preview": True,
        "lines": 3,
        "queries_created": 1,
        "ratings_set": 2,
        "ratings_unchanged": 1,
        "duplicates": 0,
        "new_queries": ["brand new"],
        "query_match": None,
        "qids_by_id": 0,
        "qids_by_text": 0,
    }
    texts = {q["text"] for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert texts == set(ids)
    assert "349" not in _export(api, case_id, "csv").text


def test_trec_qrels_import_matches_qids_by_id_then_by_text(
    api: ApiUser, other_api: ApiUser
) -> None:
    case_id, ids = _rated_case(api)
    alien = ids["alien"]
    good = f"{alien} 0 348 3\n{alien} Q0 349 0\n"
    answer = _import(api, case_id, good, fmt="trec")
    assert answer.status_code == 200, answer.text
    assert (answer.json()["ratings_set"], answer.json()["ratings_unchanged"]) == (2, 0)
    assert answer.json()["query_match"] == "id"
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{alien}/ratings").json()["ratings"]
    assert {r["doc_id"]: r["rating"] for r in ratings} == {"348": 3, "349": 0}

    other_case = _case(other_api)
    foreign = add_queries(other_api, other_case, ["theirs"])["theirs"]
    bad = f"{alien} 0 1 1\n{foreign} 0 2 1\nabc 0 3 1\n{alien} 0 4\n"
    answer = _import(api, case_id, bad, fmt="trec")
    assert answer.status_code == 422
    assert answer.json()["errors"] == [
        {"line": 2, "message": f"QID '{foreign}' is not a query id or query text of this case"},
        {"line": 3, "message": "QID 'abc' is not a query id or query text of this case"},
        {"line": 4, "message": "expected 4 fields (QID ITER DOCID RATING), found 3"},
    ]


def test_qrels_from_outside_match_by_text_skip_comments_and_summarise_errors(
    api: ApiUser,
) -> None:
    case_id = _case(api)
    ids = add_queries(api, case_id, ["alien", "301", "star"])
    # QIDs as another tool writes them: topic names (query texts here), trec_eval's comments.
    qrels = (
        "# qrels written elsewhere\n"
        "alien 0 a1 2\n"
        f"{ids['star']} 0 s#1 1\n"  # by id; a "#" inside a doc id belongs to it
        "   # an indented comment\n"
        "301 0 t1 3\n"  # not an id of the case: the query whose text is "301"
    )
    answer = _import(api, case_id, qrels, fmt="trec")
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["lines"], result["ratings_set"]) == (3, 3)
    assert (result["query_match"], result["qids_by_id"], result["qids_by_text"]) == (
        "id and text",
        1,
        2,
    )
    for text, doc, grade in (("alien", "a1", 2), ("301", "t1", 3), ("star", "s#1", 1)):
        got = api.get(f"/api/v1/cases/{case_id}/queries/{ids[text]}/ratings").json()["ratings"]
        assert [(r["doc_id"], r["rating"]) for r in got] == [(doc, grade)]

    # 1,200 lines of one problem are one line of the message, not 1,200 copies.
    unknown = "".join(f"topic{n} 0 d{n} 1\n" for n in range(1200)) + "alien 0 x 9\n"
    rejected = _import(api, case_id, unknown, fmt="trec").json()
    assert rejected["detail"] == (
        "1,201 bad lines; nothing was imported. 1,200 lines: the QID is neither a query id "
        "nor a query text of this case (add the queries to the case first, or import a CSV, "
        "which creates them) (first: line 1, QID 'topic0' is not a query id or query text "
        "of this case); 1 line: the rating is not a number on the scorer's scale (first: "
        "line 1201, the rating 9 is outside the scorer's scale [0, 3]). "
        "Fix them and import again."
    )
    assert [e["line"] for e in rejected["errors"]] == [1, 2, 3, 4, 5, 1201]


def test_multipart_upload_and_bodies_above_the_plain_limit(api: ApiUser) -> None:
    case_id = _case(api)
    files = {"file": ("ratings.csv", b"query,docid,rating\nalien,1,2\n", "text/csv")}
    answer = api.post(f"/api/v1/cases/{case_id}/ratings/import", files=files)
    assert answer.status_code == 200, answer.text
    assert answer.json()["ratings_set"] == 1
    # 12 MB is over the 10 MB limit of other routes: the import route takes it (and then
    # refuses the oversized CSV field with a line number, not the body with 413).
    huge = "query,docid,rating,note\nalien,1,2," + "x" * (12 * 1024 * 1024) + "\n"
    answer = _import(api, case_id, huge)
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["line"] == 2
    assert "field larger than field limit" in answer.json()["errors"][0]["message"]
    assert api.post(f"/api/v1/cases/{case_id}/queries", content=huge).status_code == 413


@pytest.mark.runner
def test_trec_run_and_qrels_give_trec_evals_ndcg_exactly(api: ApiUser, movies_engine: Any) -> None:
    endpoint = make_endpoint(api, movies_engine.index_url)
    case_id = int(make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))["id"])
    ids = add_queries(api, case_id, ["star wars", "star trek", "batman", "zzzxqv qqwxj"])
    run = api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()
    docs = {q["query_id"]: [d["id"] for d in q["docs"]] for q in run["queries"]}
    wars, trek, batman = docs[ids["star wars"]], docs[ids["star trek"]], docs[ids["batman"]]
    assert len(wars) == 10 and len(trek) >= 3
    # Returned docs at several ranks, a doc rated but not returned, zeros, and a query
    # whose only rating is 0 (no relevant doc: Relevo leaves it unscored, trec_eval says 0).
    _rate(api, case_id, ids["star wars"], {wars[0]: 1, wars[2]: 3, wars[9]: 2, "not-returned": 3})
    _rate(api, case_id, ids["star trek"], {trek[1]: 2, trek[0]: 0})
    _rate(api, case_id, ids["batman"], {batman[0]: 0})
    scored = api.get(f"/api/v1/cases/{case_id}/runs/{run['id']}").json()

    qrels = pytrec_eval.parse_qrel(io.StringIO(_export(api, case_id, "trec").text))
    exported = api.get(f"/api/v1/cases/{case_id}/runs/{run['id']}/export?format=trec")
    assert exported.status_code == 200
    lines = exported.text.splitlines()
    assert lines[0] == f"{ids['star wars']} Q0 {wars[0]} 1 10 relevo-{run['id']}"
    trec_run = pytrec_eval.parse_run(io.StringIO(exported.text))
    assert [
        d for d, _s in sorted(trec_run[str(ids["star wars"])].items(), key=lambda x: -x[1])
    ] == wars
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(trec_run)

    by_id = {q["query_id"]: q for q in scored["queries"]}
    for name in ("star wars", "star trek"):
        relevo = by_id[ids[name]]
        assert relevo["status"] == "scored"
        assert measured[str(ids[name])]["ndcg_cut_10"] == pytest.approx(
            relevo["raw_score"], abs=1e-12
        )
    assert measured[str(ids["batman"])]["ndcg_cut_10"] == 0.0
    assert by_id[ids["batman"]]["status"] == "unscored"
    assert str(ids["zzzxqv qqwxj"]) not in measured  # no ratings, no qrels: not evaluated


def test_staged_batches_keep_the_last_line_and_count_every_bad_line(
    api: ApiUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.interop import ratings_import

    monkeypatch.setattr(ratings_import, "STAGE_BATCH", 2)  # lines cross batch boundaries
    case_id = _case(api)
    body = "query,docid,rating\na,1,1\nb,1,2\na,1,3\nc,9,0\na,1,2\nb,1,2\n"
    answer = _import(api, case_id, body)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["lines"], result["duplicates"], result["ratings_set"]) == (6, 3, 3)
    assert result["new_queries"] == ["a", "b", "c"]
    assert _export(api, case_id, "csv").text == "query,docid,rating\r\na,1,2\r\nb,1,2\r\nc,9,0\r\n"

    bad = "query,docid,rating\n" + "".join(f"q{n},d,x\n" for n in range(150))
    rejected = _import(api, case_id, bad).json()
    assert rejected["detail"].startswith("150 bad lines; nothing was imported. 150 lines: ")
    # The first few lines of each kind of problem, not 100 copies of one message.
    assert [e["line"] for e in rejected["errors"]] == [2, 3, 4, 5, 6]
    assert len(api.get(f"/api/v1/cases/{case_id}/queries").json()) == 3


def test_streamed_json_exports_of_a_case_without_ratings(api: ApiUser) -> None:
    case_id = _case(api)
    assert _export(api, case_id, "quepid").json() == {"queries": []}
    add_queries(api, case_id, ["lonely"])
    assert _export(api, case_id, "quepid").json() == {
        "queries": [{"query": "lonely", "ratings": {}}]
    }
    rre = _export(api, case_id, "rre").json()
    assert rre["queries"] == [{"placeholders": {"$query": "lonely"}, "relevant_documents": {}}]


def test_preview_with_bad_lines_counts_the_good_ones_and_writes_nothing(api: ApiUser) -> None:
    case_id, ids = _rated_case(api)
    body = "query,docid,rating\nalien,348,1\nalien,349,2\nfresh,x,1\nfresh,y,high\nalien,1,9\n"
    answer = _import(api, case_id, body, preview="true")
    assert answer.status_code == 422
    result = answer.json()
    assert result["detail"].startswith("2 bad lines; nothing would be imported")
    assert [e["line"] for e in result["errors"]] == [5, 6]
    assert result["preview"] == {
        "lines": 3,
        "queries_created": 1,
        "ratings_set": 2,
        "ratings_unchanged": 1,
        "duplicates": 0,
        "new_queries": ["fresh"],
        "qids_by_id": 0,
        "qids_by_text": 0,
    }
    assert {q["text"] for q in api.get(f"/api/v1/cases/{case_id}/queries").json()} == set(ids)
    # Without preview the same file is refused without counts.
    assert "preview" not in _import(api, case_id, body).json()


def test_a_query_added_meanwhile_makes_the_import_read_the_file_again(
    api: ApiUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import IntegrityError

    from app.interop import ratings_import

    real = ratings_import._add_queries
    calls: list[int] = []

    def clash_once(*args: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise IntegrityError("INSERT INTO queries", {}, Exception("duplicate text"))
        real(*args)

    monkeypatch.setattr(ratings_import, "_add_queries", clash_once)
    case_id = _case(api)
    answer = _import(api, case_id, "query,docid,rating\nalien,1,2\n")
    assert answer.status_code == 200, answer.text
    assert (answer.json()["queries_created"], answer.json()["ratings_set"], len(calls)) == (1, 1, 2)
    assert _export(api, case_id, "csv").text == "query,docid,rating\r\nalien,1,2\r\n"


def test_a_query_with_no_rating_is_created_unrated(api: ApiUser) -> None:
    # Quepid's CSV export writes a query that has no ratings as "toy story,,".
    target = _case(api)
    body = "query,docid,rating\ntoy story,,\nalien,348,1\n,,\nbatman,,2\n"
    answer = _import(api, target, body)
    assert answer.status_code == 422
    assert answer.json()["errors"] == [{"line": 5, "message": "the docid is empty"}]
    answer = _import(api, target, "query,docid,rating\ntoy story,,\nalien,348,1\ntoy story,,\n")
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["lines"], result["queries_created"], result["ratings_set"]) == (3, 2, 1)
    assert result["new_queries"] == ["toy story", "alien"]
    queries = {q["text"]: q["id"] for q in api.get(f"/api/v1/cases/{target}/queries").json()}
    ratings = api.get(f"/api/v1/cases/{target}/queries/{queries['toy story']}/ratings").json()
    assert ratings == {"ratings": []}


def test_doc_ids_with_whitespace_survive_trec_files(api: ApiUser) -> None:
    # TREC files split fields on whitespace: such ids go out percent-escaped, and come back.
    case_id = _case(api)
    ids = add_queries(api, case_id, ["alien"])
    _rate(api, case_id, ids["alien"], {"a b": 3, "tab\there": 1, "50%": 2, "plain": 0})
    qrels = _export(api, case_id, "trec").text.splitlines()
    qid = ids["alien"]
    assert sorted(qrels) == sorted(
        [f"{qid} 0 a%20b 3", f"{qid} 0 tab%09here 1", f"{qid} 0 50%25 2", f"{qid} 0 plain 0"]
    )
    assert all(len(line.split()) == 4 for line in qrels)
    _rate(api, case_id, ids["alien"], {"a b": 1, "50%": 0})
    answer = _import(api, case_id, "\n".join(qrels) + "\n", fmt="trec")
    assert answer.status_code == 200, answer.text
    back = api.get(f"/api/v1/cases/{case_id}/queries/{qid}/ratings").json()["ratings"]
    assert {r["doc_id"]: r["rating"] for r in back} == {
        "a b": 3,
        "tab\there": 1,
        "50%": 2,
        "plain": 0,
    }

"""A stored run exported as a TREC run file, with ties, unrated docs and docs rated but not
returned: pytrec_eval on the exported qrels and run gives Relevo's own NDCG@10."""

from __future__ import annotations

import pytest
import pytrec_eval
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries
from tests.support.pages import doc, finished_run
from tests.support.ratings_files import _case as new_case
from tests.support.ratings_files import _export
from tests.support.ratings_files import _rate as rate


def parse(text: str, columns: int) -> list[list[str]]:
    rows = [line.split() for line in text.splitlines()]
    assert all(len(row) == columns for row in rows)
    return rows


def test_trec_run_reproduces_relevo_ndcg_with_pytrec_eval(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id = new_case(api, "NDCG@10")
    ids = add_queries(api, case_id, ["ties", "long", "no relevant", "unrated"])
    # Doc ids sort against the ranking ("z" first, "a" last), ratings tie, some docs are
    # unrated, and "x" is rated but never returned: it counts in the ideal only.
    rate(api, case_id, ids["ties"], {"z": 2, "m": 2, "a": 2, "c": 0, "x": 3})
    rate(api, case_id, ids["long"], {f"d{i:02}": i % 4 for i in range(15)} | {"far": 3})
    rate(api, case_id, ids["no relevant"], {"p": 0})
    ranked = {
        "ties": ["z", "q", "m", "c", "a"],
        "long": [f"d{i:02}" for i in reversed(range(15))] + ["extra"],
        "no relevant": ["p", "o"],
        "unrated": ["u1"],
    }
    run_id = finished_run(
        session_factory,
        case_id,
        {
            ids[text]: {"text": text, "docs": [doc(d, d, r) for r, d in enumerate(docs, 1)]}
            for text, docs in ranked.items()
        },
        scorer=int(api.get(f"/api/v1/cases/{case_id}").json()["scorer_id"]),
    )
    rescored = api.post(f"/api/v1/cases/{case_id}/runs/{run_id}/rescore")
    assert rescored.status_code == 200, rescored.text
    relevo = {str(q["query_id"]): q for q in rescored.json()["queries"]}

    response = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}/export", params={"format": "trec"})
    assert response.status_code == 200, response.text
    run_rows = parse(response.text, 6)
    ties = [row for row in run_rows if row[0] == str(ids["ties"])]
    assert ties == [
        [str(ids["ties"]), "Q0", d, str(rank), str(6 - rank), f"relevo-{run_id}"]
        for rank, d in enumerate(ranked["ties"], 1)
    ]
    assert len([row for row in run_rows if row[0] == str(ids["long"])]) == 16

    qrels: dict[str, dict[str, int]] = {}
    for qid, _zero, doc_id, rating in parse(_export(api, case_id, "trec").text, 4):
        qrels.setdefault(qid, {})[doc_id] = int(rating)
    run: dict[str, dict[str, float]] = {}
    for qid, _q0, doc_id, _rank, score, _tag in run_rows:
        run.setdefault(qid, {})[doc_id] = float(score)
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)

    for name in ("ties", "long"):
        query = relevo[str(ids[name])]
        assert query["status"] == "scored"
        assert measured[str(ids[name])]["ndcg_cut_10"] * 100 == pytest.approx(query["score"])
    # Relevo leaves a query without relevant ratings unscored; trec_eval gives it 0.
    assert relevo[str(ids["no relevant"])]["status"] == "unscored"
    assert measured[str(ids["no relevant"])]["ndcg_cut_10"] == 0
    assert str(ids["unrated"]) not in measured
    # By hand for "ties": DCG = 2 + 2/log2(4) + 2/log2(6);
    # IDCG = 3 + 2/log2(3) + 2/log2(4) + 2/log2(5).
    assert relevo[str(ids["ties"])]["score"] == pytest.approx(61.6295, abs=1e-4)


def test_run_export_of_unknown_run_is_404(api: ApiUser) -> None:
    case_id = new_case(api)
    response = api.get(f"/api/v1/cases/{case_id}/runs/999999/export")
    assert response.status_code == 404

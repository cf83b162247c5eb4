"""Quepid scorer names, both ways: an import never takes a built-in's name (issue 36 item 8),
and an export names a Quepid scorer only when it computes the same numbers there (item 2)."""

from __future__ import annotations

from typing import Any

import pytest

from app.scoring.quepid_code import builtin_code
from app.scoring.quepid_scorers import shipped_scorer
from tests.fixtures.users import ApiUser
from tests.support.quepid import export, fixture, imported

# An older Quepid AP@10: it divides by the relevant docs found, not by all relevant ones.
OLDER_AP = """var k = 10;
var found = 0, total = 0;
eachDoc(function (doc, i) {
  if (hasDocRating(i) && docRating(i) > 0) { found += 1; total += found / (i + 1); }
}, k);
setScore(found ? total / found : 0);
"""


def _case_with_scorer(scorer: dict[str, Any]) -> dict[str, Any]:
    data = fixture("movies_es_case.json")
    data["scorer"] = scorer
    return data


def test_other_code_under_a_builtins_name_is_imported_under_its_own_name(api: ApiUser) -> None:
    data = _case_with_scorer({"name": "AP@10", "code": OLDER_AP, "scale": [0, 1]})
    case = imported(api, data)
    assert case["scorer_name"] == "AP@10 (imported)" and case["scorer_created"] is True
    assert case["warnings"] == [
        'The file\'s scorer "AP@10" has code of its own, and "AP@10" is the name of a built-in '
        'scorer that computes other numbers: it is imported as "AP@10 (imported)".'
    ]
    names = [s["name"].casefold() for s in api.get("/api/v1/scorers").json()]
    assert names.count("ap@10") == 1  # the built-in alone
    scorer = api.get(f"/api/v1/scorers/{case['scorer_id']}").json()
    assert scorer["code"] == OLDER_AP and scorer["environment"] == "quepid"
    # The same file again reuses it; any spelling of a built-in's name is caught.
    assert imported(api, data)["scorer_id"] == case["scorer_id"]
    data["scorer"]["name"] = "classic"
    assert imported(api, data)["scorer_name"] == "classic (imported)"


def test_quepids_own_code_under_its_name_is_quepids_scorer(api: ApiUser) -> None:
    shipped = shipped_scorer("AP@10")
    assert shipped is not None
    data = _case_with_scorer({"name": "AP@10", "code": shipped.code, "scale": [0, 1]})
    case = imported(api, data)
    assert (case["scorer_name"], case["warnings"]) == ("AP@10 (Quepid)", [])


# ---------------------------------------------------------------- the export (item 2)


def _preset_id(api: ApiUser, name: str) -> int:
    return int(next(s["id"] for s in api.get("/api/v1/scorers").json() if s["name"] == name))


@pytest.mark.parametrize(("in_file", "quepid_name"), [("nDCG@10", "nDCG@10"), ("v1", "v1")])
def test_quepids_own_scorer_goes_out_under_quepids_exact_name(
    api: ApiUser, in_file: str, quepid_name: str
) -> None:
    data = _case_with_scorer({"name": in_file})
    for q in data["queries"]:  # v1's scale is 1-10
        q["ratings"] = [{**r, "rating": (r["rating"] or 0) + 1} for r in q["ratings"] or []]
    case = imported(api, data)
    scorer = export(api, case["id"])["scorer"]
    assert scorer["name"] == quepid_name  # case-sensitive: Quepid's is nDCG@10, not NDCG@10
    assert "quepid_scorer_to_create" not in scorer
    assert imported(api, export(api, case["id"]))["scorer_id"] == case["scorer_id"]


def test_a_builtin_goes_out_as_a_scorer_to_create_in_quepid_with_its_code(api: ApiUser) -> None:
    case = imported(api, _case_with_scorer({"name": "nDCG@10"}))
    ndcg = _preset_id(api, "NDCG@10")
    assert api.patch(f"/api/v1/cases/{case['id']}", json={"scorer_id": ndcg}).status_code == 200
    scorer = export(api, case["id"])["scorer"]
    # Not Quepid's nDCG@10 (other numbers), nor a name Quepid would refuse without saying.
    assert scorer["name"] == "NDCG@10 (Relevo)"
    assert scorer["code"] == builtin_code("ndcg", {}, [0.0, 1.0, 2.0, 3.0])
    assert (scorer["scale"], scorer["max_score"], scorer["environment"]) == (
        [0, 1, 2, 3],
        100,
        "quepid",
    )
    note = scorer["quepid_scorer_to_create"]
    assert note.startswith("Quepid has no scorer that gives these numbers. Before importing")
    assert 'create a scorer named "NDCG@10 (Relevo)"' in note
    assert 'Relevo\'s built-in "NDCG@10" (ndcg)' in note
    classic = _preset_id(api, "Classic")
    api.patch(f"/api/v1/cases/{case['id']}", json={"scorer_id": classic})
    assert export(api, case["id"])["scorer"]["name"] == "Classic (Relevo)"  # not v1


def test_a_changed_quepid_scorer_or_ones_own_goes_out_under_a_name_to_create(
    api: ApiUser,
) -> None:
    case = imported(api, _case_with_scorer({"name": "AP@10"}))
    api.patch(f"/api/v1/scorers/{case['scorer_id']}", json={"code": OLDER_AP})
    scorer = export(api, case["id"])["scorer"]
    assert (scorer["name"], scorer["code"]) == ("AP@10 (Relevo)", OLDER_AP)
    assert 'create a scorer named "AP@10 (Relevo)"' in scorer["quepid_scorer_to_create"]
    mine = api.post(
        "/api/v1/scorers",
        json={"name": "Mine", "kind": "javascript", "code": "setScore(1)", "scale": [0, 1]},
    ).json()
    api.patch(f"/api/v1/cases/{case['id']}", json={"scorer_id": mine["id"]})
    scorer = export(api, case["id"])["scorer"]
    assert (scorer["name"], scorer["environment"]) == ("Mine", "relevo")
    assert "written for Relevo's environment" in scorer["quepid_scorer_to_create"]


def test_an_imported_ndcg_scores_as_quepid_does(api: ApiUser) -> None:
    """Issue 36 item 1: SCORING.md's data Z through the scorer a case file naming nDCG@10 gets."""
    case = imported(api, _case_with_scorer({"name": "nDCG@10"}))
    ratings = {"a": 3, "b": 3, "c": 0, "y": 1} | {f"x{n}": 3 for n in range(1, 10)}
    body = {"scorer_id": case["scorer_id"], "docs": ["a", "b", "c"], "ratings": ratings}
    answer = api.post("/api/v1/score", json=body).json()
    assert answer["status"] == "scored"
    assert answer["score"] == pytest.approx(33.5506, abs=5e-5)  # 35.8954 if cut at ten docs

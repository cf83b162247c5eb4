"""Quepid scorer names, both ways: an import never takes a built-in's name (issue 36 item 8),
and an export names a Quepid scorer only when it computes the same numbers there (item 2)."""

from __future__ import annotations

from typing import Any

from app.scoring.quepid_scorers import shipped_scorer
from tests.fixtures.users import ApiUser
from tests.support.quepid import fixture, imported

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

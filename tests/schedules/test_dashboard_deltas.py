"""The dashboard's changes are re-scored once and kept, yet always equal a fresh computation.

After each change a re-score depends on (a rating, a query's weight, the aggregate, the
scorer's definition, a stored outcome re-scored in place, a deleted query), the dashboard's
"over the week" and "since the run before" equal ``change_since(...).delta()`` computed
directly; loads with nothing changed re-score nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.models import Case, Run
from app.runs import rescore_cache
from app.runs.change import change_since, rescore_rows
from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, doc, finished_run, movies_case, scorer_id

Deltas = tuple[float | None, float | None]
"""(delta_7d, delta_last_run), as the dashboard shows them."""

# Three runs of three queries (A is left out of the first): each ranks the docs differently.
RANKINGS = (
    {"B": ["4", "5", "6"], "C": ["7", "8"]},
    {"A": ["2", "1", "3"], "B": ["5", "4", "6"], "C": ["8", "7"]},
    {"A": ["3", "2", "1"], "B": ["4", "6", "5"], "C": ["7", "8"]},
)
RATINGS = {"A": {"1": 3, "2": 1, "3": 0}, "B": {"4": 2, "5": 3, "6": 1}, "C": {"7": 1, "8": 3}}


def _ok(response: Any) -> None:
    assert response.is_success, response.text


def _rate(api: ApiUser, case_id: int, query_id: int, ratings: dict[str, int]) -> None:
    body = {"ratings": [{"doc_id": k, "rating": v} for k, v in ratings.items()]}
    _ok(api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body))


def _setup(
    api: ApiUser, factory: sessionmaker[Session], **outcomes: dict[str, Any]
) -> tuple[int, dict[str, int], int, list[int]]:
    """A case on its own NDCG scorer with a second metric, its queries rated, and three
    runs; ``outcomes`` replaces a query's outcome in the latest run. Return the case id,
    query ids, scorer id and run ids."""
    body = {"name": "Mine", "kind": "ndcg", "params": {"k": 10}, "scale": [0, 1, 2, 3]}
    created = api.post("/api/v1/scorers", json=body)
    _ok(created)
    scorer = int(created.json()["id"])
    case_id = movies_case(api, scorer_id=scorer)
    _ok(api.patch(f"/api/v1/cases/{case_id}", json={"metric_scorer_ids": [scorer_id(api, "P@10")]}))
    ids = add_queries(api, case_id, list(RATINGS))
    for text, ratings in RATINGS.items():
        _rate(api, case_id, ids[text], ratings)
    runs = []
    for n, ranking in enumerate(RANKINGS):
        rows: dict[int, dict[str, Any]] = {
            # A stored score, so that a recount of the run's totals leaves it a case score.
            ids[text]: {"score": 50.0, "docs": [doc(d, f"F{d}", i + 1) for i, d in enumerate(docs)]}
            for text, docs in ranking.items()
        }
        if n == len(RANKINGS) - 1:
            rows.update({ids[text]: outcome for text, outcome in outcomes.items()})
        runs.append(finished_run(factory, case_id, rows, scorer=scorer, case_score=50.0))
    return case_id, ids, scorer, runs


def _shown(api: ApiUser, case_id: int) -> Deltas:
    (row,) = [c for c in api.get("/api/v1/dashboard").json()["cases"] if c["id"] == case_id]
    return row["delta_7d"], row["delta_last_run"]


def _direct(factory: sessionmaker[Session], case_id: int, runs: list[int]) -> Deltas:
    """The changes computed afresh: the latest run since the first and since the one before."""
    with factory() as session:
        case, latest, first = (
            session.get(Case, case_id),
            session.get(Run, runs[-1]),
            session.get(Run, runs[0]),
        )
        assert case is not None and latest is not None and first is not None
        week = change_since(session=session, case=case, run=latest, other=first).delta()
        last = change_since(session=session, case=case, run=latest).delta()
    return (
        None if week is None else round(week, 4),
        None if last is None else round(last, 4),
    )


def _agrees(api: ApiUser, factory: sessionmaker[Session], case_id: int, runs: list[int]) -> Deltas:
    """Load the dashboard twice (the second from what the first kept); both must show the
    fresh numbers. Return them."""
    expected = _direct(factory, case_id, runs)
    assert expected[0] is not None and expected[1] is not None
    assert _shown(api, case_id) == expected
    assert _shown(api, case_id) == expected
    return expected


def test_each_change_shows_at_once(api: ApiUser, session_factory: sessionmaker[Session]) -> None:
    case_id, ids, scorer, runs = _setup(api, session_factory)
    before = _agrees(api, session_factory, case_id, runs)

    def after(change: Callable[[], None]) -> Deltas:
        nonlocal before
        change()
        now = _agrees(api, session_factory, case_id, runs)
        assert now != before  # a kept number from before the change would be wrong
        before = now
        return now

    after(lambda: _rate(api, case_id, ids["A"], {"1": 0, "2": 3, "3": 2}))
    path = f"/api/v1/cases/{case_id}"
    # A weight alone changes nothing while the case takes a plain mean...
    _ok(api.patch(f"{path}/queries/{ids['C']}", json={"weight": 5}))
    assert _agrees(api, session_factory, case_id, runs) == before
    after(lambda: _ok(api.patch(path, json={"aggregate": "weighted_mean"})))
    after(lambda: _ok(api.patch(f"{path}/queries/{ids['C']}", json={"weight": 0.5})))
    after(lambda: _ok(api.patch(f"/api/v1/scorers/{scorer}", json={"params": {"k": 1}})))
    after(lambda: _ok(api.patch(path, json={"aggregate": "mean"})))
    after(lambda: _ok(api.delete(f"{path}/queries/{ids['B']}")))


def test_an_outcome_rescored_in_place_shows(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    """C's row in the latest run kept no ranking (nothing to re-score: its stored score
    counts) until the run is re-scored, which stores C's score without results."""
    kept = {"status": "scored", "score": 90.0, "docs": [], "num_found": None}
    case_id, _ids, _scorer, runs = _setup(api, session_factory, C=kept)
    before = _agrees(api, session_factory, case_id, runs)
    _ok(api.post(f"/api/v1/cases/{case_id}/runs/{runs[-1]}/rescore"))
    assert _agrees(api, session_factory, case_id, runs) != before


@pytest.fixture
def rescores(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ids of the runs the kept scores had to re-score, in order (none kept at first)."""
    rescore_cache.clear()
    seen: list[int] = []

    def counted(**kwargs: Any) -> Any:
        seen.append(kwargs["run_id"])
        return rescore_rows(**kwargs)

    monkeypatch.setattr("app.runs.rescore_cache.rescore_rows", counted)
    return seen


def test_a_load_rescores_only_the_runs_that_changed(
    api: ApiUser, session_factory: sessionmaker[Session], rescores: list[int]
) -> None:
    case_id, ids, _scorer, runs = _setup(api, session_factory)
    _agrees(api, session_factory, case_id, runs)
    assert sorted(rescores) == sorted(runs)  # once each, though loaded twice
    rescores.clear()
    # A is not in the first run: its rating re-scores the other two only.
    _rate(api, case_id, ids["A"], {"1": 1})
    _agrees(api, session_factory, case_id, runs)
    assert sorted(rescores) == runs[1:]

"""A change of a case's metric set, scorer or aggregate and the re-score of its latest run
by them are one unit of work: both are written, or neither."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.cases import flows
from app.cases.schemas import CaseUpdate
from app.models import Case, Run, User
from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, doc, finished_run, movies_case, scorer_id


def _case_with_run(api: ApiUser, factory: sessionmaker[Session]) -> tuple[int, int]:
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["alien"])
    outcomes = {ids["alien"]: {"docs": [doc("6", "Alien", 1), doc("3", "Aliens", 2)]}}
    run_id = finished_run(factory, case_id, outcomes, scorer=ndcg)
    body = {"ratings": [{"doc_id": "3", "rating": 3}]}
    put = api.put(f"/api/v1/cases/{case_id}/queries/{ids['alien']}/ratings", json=body)
    assert put.status_code == 200, put.text
    return case_id, run_id


def test_a_failing_rescore_leaves_the_metric_set_as_it_was(
    api: ApiUser, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    case_id, run_id = _case_with_run(api, session_factory)
    p10 = scorer_id(api, "P@10")

    def broken(**_: Any) -> Run:
        raise RuntimeError("the re-score failed")

    monkeypatch.setattr("app.runs.rescore.rescore_run", broken)
    with session_factory() as session:
        case, user = session.get(Case, case_id), session.get(User, api.id)
        assert case is not None and user is not None
        with pytest.raises(RuntimeError):
            flows.update_case(
                session=session, user=user, case=case, body=CaseUpdate(metric_scorer_ids=[p10])
            )
        session.rollback()
    with session_factory() as session:
        case, run = session.get(Case, case_id), session.get(Run, run_id)
        assert case is not None and run is not None
        # Before, the metric set was committed on its own and the run kept the old metrics:
        # the metric panel then listed P@10 with no score.
        assert case.metric_scorer_ids in (None, [])
        assert run.metric_scorer_ids in (None, [])


def test_the_metric_set_and_its_scores_are_written_together(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, run_id = _case_with_run(api, session_factory)
    p10 = scorer_id(api, "P@10")
    answer = api.patch(f"/api/v1/cases/{case_id}", json={"metric_scorer_ids": [p10]})
    assert answer.status_code == 200, answer.text
    run = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
    assert [m["name"] for m in run["metrics"]] == ["NDCG@10", "P@10"]
    # Alien's rated doc is one of the two returned: P@10 (over the docs returned) is 50.
    assert run["metrics"][1]["case_score"] == pytest.approx(50.0)
    assert run["queries"][0]["metric_scores"][str(p10)] == pytest.approx(50.0)

"""The one builder of a stored run's scoring input: stored docs with the current ratings."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.models import Case, Query, RunQuery
from app.runs.scoring_input import stored_inputs
from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, doc, finished_run, movies_case, scorer_id


def test_a_stored_row_is_scored_with_the_ratings_and_options_of_now(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["star wars", "alien"])
    outcomes: dict[int, dict[str, Any]] = {
        ids["star wars"]: {"docs": [doc("2", "Empire", 1), doc("1", "A New Hope", 2)]},
        ids["alien"]: {"docs": [doc("6", "Alien", 1)], "num_found": 40},
    }
    run_id = finished_run(session_factory, case_id, outcomes, scorer=ndcg)
    body = {"ratings": [{"doc_id": "1", "rating": 3}, {"doc_id": "9", "rating": 1}]}
    path = f"/api/v1/cases/{case_id}/queries/{ids['star wars']}/ratings"
    assert api.put(path, json=body).status_code == 200
    with session_factory() as session:
        case = session.get(Case, case_id)
        assert case is not None
        session.get_one(Query, ids["alien"]).options = {"boost": 2}
        session.flush()
        rows = {
            r.query_id: r
            for r in session.scalars(select(RunQuery).where(RunQuery.run_id == run_id))
        }
        loaded = stored_inputs(session=session, case=case, query_ids=list(ids.values()))
        star, alien = loaded.input_of(rows[ids["star wars"]]), loaded.input_of(rows[ids["alien"]])
        assert [d.id for d in star.docs] == ["2", "1"]
        assert dict(star.ratings) == {"1": 3.0, "9": 1.0} and dict(alien.ratings) == {}
        assert (alien.num_found, dict(alien.query_options)) == (40, {"boost": 2})
        # The text is the one the run stored (what was searched), not the query's of now.
        assert star.text == rows[ids["star wars"]].text and dict(star.query_options) == {}
        # Options the caller holds are used as given, without a look-up.
        given = stored_inputs(
            session=session, case=case, query_ids=[ids["alien"]], query_options={}
        )
        assert dict(given.input_of(rows[ids["alien"]]).query_options) == {}
        session.rollback()

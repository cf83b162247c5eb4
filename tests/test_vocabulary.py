"""The domain's words: stored as plain text, read back as their types, one list each."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.models import Case, Run, SearchEndpoint, Try, User
from app.scorers import service as scorer_service
from app.scoring.metrics import METRICS
from app.scoring.validation import KINDS
from app.vocabulary import Engine, HttpMethod, RunStatus, ScorerKind


def _case(db: Session) -> Case:
    user = User(email="words@example.com", password_hash="x")
    db.add(user)
    db.flush()
    endpoint = SearchEndpoint(owner_id=user.id, name="e", engine=Engine.SOLR, url="http://s:8983")
    db.add(endpoint)
    db.flush()
    case = Case(owner_id=user.id, name="c", scorer=scorer_service.default_scorer(session=db))
    db.add(case)
    db.flush()
    db.add(Try(case_id=case.id, number=1, search_endpoint=endpoint, query_template="q=x"))
    db.flush()
    return case


def test_words_are_stored_as_their_plain_values_and_read_back_as_types(
    client: TestClient, db: Session
) -> None:
    case = _case(db)
    run = Run(case_id=case.id, try_number=1, scorer=case.scorer, status=RunStatus.CANCELLED)
    db.add(run)
    db.commit()
    stored = db.execute(text("SELECT status FROM runs WHERE id = :id"), {"id": run.id}).scalar()
    engine = db.execute(text("SELECT engine, method FROM search_endpoints")).one()
    assert (stored, tuple(engine)) == ("cancelled", ("solr", "GET"))
    db.expire_all()
    again = db.get(Run, run.id)
    assert again is not None
    assert again.status is RunStatus.CANCELLED
    assert again.scorer is not None and isinstance(again.scorer.kind, ScorerKind)
    assert case.tries[0].search_endpoint.method is HttpMethod.GET


def test_relationships_follow_the_foreign_keys(client: TestClient, db: Session) -> None:
    case = _case(db)
    db.commit()
    db.expire_all()
    assert case.scorer.id == case.scorer_id
    assert case.owner.email == "words@example.com"
    assert case.tries[0].search_endpoint.id == case.tries[0].search_endpoint_id


def test_every_scorer_kind_is_validated_and_every_builtin_has_a_metric() -> None:
    assert set(KINDS) == {str(kind) for kind in ScorerKind}
    assert set(METRICS) == set(ScorerKind) - {ScorerKind.JAVASCRIPT}

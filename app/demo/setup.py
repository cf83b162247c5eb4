"""The demo: a user, an endpoint on the embedded engine and a rated "Movies" case.

Ratings are judged from the corpus itself with written-down rules, never from what a
template returns: a franchise entry or a director's film is Perfect when acclaimed (IMDb 7.5
or more), Good when liked or unrated by IMDb, Fair otherwise; a related film is Good; every
other document the first run returns is judged Poor, except in a query left for the user to
rate. The default template matches the words of titles and directors exactly (all of them, in
one field) and ranks a franchise's entries in no particular order, so the case starts well
below 100: the ``fuzziness`` knob finds the misspelled queries' films (at 2 edits, words
that are not misspellings find other films too) and the ``ratingWeight`` knob (IMDb rating
added to the text score) puts the acclaimed ones first. The template searches the words as
typed (``title.plain``, ``director.plain``): a misspelling is an edit away from the word but
often two from its English stem."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import session_scope
from app.demo.corpus import load_movies
from app.endpoints.schemas import EndpointCreate
from app.models import Case, Query, Rating, RunQuery, Scorer, SearchEndpoint
from app.outbound.transport import engine_http_client
from app.queries import service as query_service
from app.queries.schemas import RatingIn
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.runs.runner import execute_run
from app.search import SearchClient

DEMO_EMAIL = "demo@relevo.example"
DEMO_PASSWORD = "relevo-demo-password"
CASE_NAME = "Movies"
ENDPOINT_NAME = "Embedded movies (osmem)"
TEMPLATE = """{
  "query": {
    "function_score": {
      "query": {
        "multi_match": {
          "query": "#$query##",
          "fields": ["title.plain^##titleBoost##", "director.plain^##directorBoost##"],
          "operator": "and",
          "fuzziness": ##fuzziness##
        }
      },
      "field_value_factor": {"field": "imdb_rating", "factor": ##ratingWeight##, "missing": 6.5},
      "boost_mode": "sum"
    }
  }
}"""
KNOBS = {"titleBoost": 10, "directorBoost": 5, "ratingWeight": 0, "fuzziness": 0}
FIELD_SPEC = "id:_id title:title director genre release_date imdb_rating"
POOR, FAIR, GOOD, PERFECT = 0, 1, 2, 3
# Queries whose returned documents no rule rated stay unrated: something to do in the demo
# (is The Rocky Horror Picture Show a Rocky film?).
LEFT_TO_RATE = frozenset({"rocky"})


@dataclass(frozen=True)
class Judgement:
    """How one demo query's documents are rated."""

    text: str
    perfect: str | None = None  # regex on the lower-cased title of the franchise's entries
    good: str | None = None
    director: str | None = None  # the director's films are Good, the acclaimed ones Perfect

    def rate(self, movie: dict[str, Any]) -> int:
        """Return the rating of a movie for this query."""
        title = str(movie.get("title", "")).lower()
        if self.perfect and re.search(self.perfect, title):
            return _by_acclaim(movie)
        if self.good and re.search(self.good, title):
            return GOOD
        if self.director and movie.get("director") == self.director:
            return _by_acclaim(movie)
        return POOR


def _by_acclaim(movie: dict[str, Any]) -> int:
    """Return the grade of a film the query asks for: the acclaimed ones are wanted first."""
    imdb = movie.get("imdb_rating")
    if imdb is None:
        return GOOD
    return PERFECT if float(imdb) >= 7.5 else GOOD if float(imdb) >= 6.5 else FAIR


JUDGEMENTS = (
    Judgement("star wars", perfect=r"^star wars"),
    Judgement("star trek", perfect=r"^star trek"),
    Judgement("batman", perfect=r"^batman", good=r"dark knight"),
    Judgement("spielberg", director="Steven Spielberg"),
    Judgement("harry potter", perfect=r"^harry potter"),
    Judgement("toy story", perfect=r"^toy story"),
    Judgement("lord of the rings", perfect=r"lord of the rings"),
    Judgement("jurassic park", perfect=r"jurassic park"),
    Judgement("indiana jones", perfect=r"^indiana jones", good=r"raiders of the lost ark"),
    Judgement("pirates of the caribbean", perfect=r"^pirates of the caribbean"),
    Judgement("spider-man", perfect=r"^spider-man"),
    Judgement("the matrix", perfect=r"^the matrix"),
    Judgement("shrek", perfect=r"^shrek"),
    Judgement("rocky", perfect=r"^rocky( balboa| [ivx]+)?$"),
    Judgement("godfather", perfect=r"^the godfather"),
    Judgement(
        "alien",
        perfect=r"^(alien|aliens|alien³|alien: resurrection)$",
        good=r"alien vs\.? predator",
    ),
    Judgement("terminator", perfect=r"terminator"),
    Judgement("superman", perfect=r"^superman"),
    Judgement("tim burton", director="Tim Burton"),
    Judgement("christopher nolan", director="Christopher Nolan"),
    Judgement("james cameron", director="James Cameron"),
    # Typed as users type: found only when the ``fuzziness`` knob allows an edit or two.
    Judgement("godfater", perfect=r"^the godfather"),
    Judgement("harry poter", perfect=r"^harry potter"),
    Judgement("star trk", perfect=r"^star trek"),
    Judgement("terminater", perfect=r"terminator"),
)


@dataclass(frozen=True)
class DemoInfo:
    case_id: int
    created: bool


def prepare_demo(*, session_factory: sessionmaker[Session], engine_url: str) -> DemoInfo:
    """Create the demo once (later calls reuse it), point it at the engine, run it if never run."""
    with session_scope(session_factory) as session:
        info = _ensure_demo(session, engine_url)
        needs_run = (
            run_service.latest_finished_run(session=session, case=_case(session, info.case_id))
            is None
        )
    if needs_run:
        asyncio.run(_run_once(session_factory, info.case_id))
        with session_scope(session_factory) as session:
            _rate_unjudged_results(session, info.case_id)
    return info


def _ensure_demo(session: Session, engine_url: str) -> DemoInfo:
    user = user_service.get_by_email(session=session, email=DEMO_EMAIL)
    if user is None:
        user = user_service.create_user(session=session, email=DEMO_EMAIL, password=DEMO_PASSWORD)
    endpoint = session.scalar(
        select(SearchEndpoint).where(
            SearchEndpoint.owner_id == user.id, SearchEndpoint.name == ENDPOINT_NAME
        )
    )
    index_url = engine_url.rstrip("/") + "/movies"
    if endpoint is None:
        from app.endpoints import service as endpoint_service

        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(
                name=ENDPOINT_NAME, engine="opensearch", url=index_url, max_concurrency=8
            ),
        )
    elif endpoint.url != index_url:
        # The embedded engine listens on a new port each start; the endpoint follows it.
        endpoint.url = index_url
        session.commit()
    case = session.scalar(select(Case).where(Case.owner_id == user.id, Case.name == CASE_NAME))
    if case is not None:
        return DemoInfo(case_id=case.id, created=False)
    ndcg = session.scalar(select(Scorer).where(Scorer.owner_id.is_(None), Scorer.name == "NDCG@10"))
    assert ndcg is not None
    case = case_service.create_case(
        session=session,
        user=user,
        body=CaseCreate(
            name=CASE_NAME,
            search_endpoint_id=endpoint.id,
            query_template=TEMPLATE,
            scorer_id=ndcg.id,
            field_spec=FIELD_SPEC,
            rows=10,
            knobs=KNOBS,
        ),
    )
    queries = query_service.add_queries(
        session=session, case=case, texts=[j.text for j in JUDGEMENTS]
    )
    movies = load_movies()
    for query, judgement in zip(queries, JUDGEMENTS, strict=True):
        ratings = [
            RatingIn(doc_id=m["id"], rating=judgement.rate(m))
            for m in movies
            if judgement.rate(m) > POOR
        ]
        query_service.set_ratings(
            session=session, query=query, scorer=ndcg, ratings=ratings, user=user
        )
    return DemoInfo(case_id=case.id, created=True)


def _case(session: Session, case_id: int) -> Case:
    case = session.get(Case, case_id)
    assert case is not None
    return case


async def _run_once(factory: sessionmaker[Session], case_id: int) -> None:
    with session_scope(factory) as session:
        run = run_service.create_run(session=session, case=_case(session, case_id))
    async with engine_http_client() as http:  # the client every run uses
        await execute_run(session_factory=factory, run_id=run.id, search=SearchClient(http))


def _rate_unjudged_results(session: Session, case_id: int) -> None:
    """Judge as Poor every returned document that no rule rated (but in the queries left
    for the user to rate), then re-score."""
    case = _case(session, case_id)
    run = run_service.latest_finished_run(session=session, case=case)
    if run is None:
        return
    user_id = case.owner_id
    rows = session.scalars(select(RunQuery).where(RunQuery.run_id == run.id)).all()
    for row in rows:
        if row.query_id is None or row.text in LEFT_TO_RATE:
            continue
        rated = set(session.scalars(select(Rating.doc_id).where(Rating.query_id == row.query_id)))
        for doc in row.docs:
            if doc["id"] not in rated:
                session.add(
                    Rating(
                        query_id=row.query_id, doc_id=doc["id"], rating=POOR, rated_by_id=user_id
                    )
                )
    session.commit()
    for query in session.scalars(select(Query).where(Query.case_id == case_id)).all():
        rescoring.rescore_query(session=session, case=case, query=query)

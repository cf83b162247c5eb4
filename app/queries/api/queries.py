"""A case's queries and ratings."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.accounts.deps import CurrentUser
from app.cases.deps import CaseDep
from app.queries import flows as rating_service
from app.queries import service as service
from app.queries.deps import QueryDep
from app.queries.schemas import (
    BulkQueries,
    BulkQueriesRead,
    QueriesPatch,
    QueryCreate,
    QueryRead,
    QueryScore,
    QueryUpdate,
    RaterRead,
    RatingRead,
    RatingsChanged,
    RatingsPut,
    RatingsRead,
)
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/cases/{case_id}/queries", tags=["queries"])


@router.get("", response_model=list[QueryRead])
def list_queries(case: CaseDep, session: SessionDep) -> list[QueryRead]:
    """Return the case's queries in position order."""
    return [QueryRead.model_validate(q) for q in service.list_queries(session=session, case=case)]


@router.post("", response_model=QueryRead, status_code=201)
def add_query(
    body: QueryCreate, case: CaseDep, session: SessionDep, response: Response
) -> QueryRead:
    """Add a query (201), or return the existing one with the same text (200)."""
    query, created = service.add_query(session=session, case=case, body=body)
    if not created:
        response.status_code = 200
    return QueryRead.model_validate(query)


@router.post("/bulk", response_model=BulkQueriesRead)
def add_queries(body: BulkQueries, case: CaseDep, session: SessionDep) -> BulkQueriesRead:
    """Add many queries; blanks and repeats are skipped, existing texts returned as they are."""
    queries = service.add_queries(session=session, case=case, texts=body.queries)
    return BulkQueriesRead(queries=[QueryRead.model_validate(q) for q in queries])


@router.patch("", response_model=BulkQueriesRead)
def patch_queries(body: QueriesPatch, case: CaseDep, session: SessionDep) -> BulkQueriesRead:
    """Add or remove tags of many queries and set their weight; return them."""
    queries = service.patch_queries(session=session, case=case, body=body)
    return BulkQueriesRead(queries=[QueryRead.model_validate(q) for q in queries])


@router.patch("/{query_id}", response_model=QueryRead)
def update_query(
    query: QueryDep, body: QueryUpdate, case: CaseDep, session: SessionDep
) -> QueryRead:
    """Change a query."""
    return QueryRead.model_validate(
        service.update_query(session=session, case=case, query=query, body=body)
    )


@router.delete("/{query_id}", status_code=204)
def delete_query(query: QueryDep, case: CaseDep, session: SessionDep) -> None:
    """Delete a query and its ratings."""
    service.delete_query(session=session, query=query)


@router.get("/{query_id}/ratings", response_model=RatingsRead)
def get_ratings(query: QueryDep, case: CaseDep, session: SessionDep) -> RatingsRead:
    """Return every rating of the query."""
    return RatingsRead(
        ratings=[
            RatingRead(
                doc_id=rating.doc_id,
                rating=rating.rating,
                rated_by=None if email is None else RaterRead(user_id=user_id, email=email),
                rated_at=rating.updated_at,
            )
            for rating, user_id, email in service.ratings_with_raters(session=session, query=query)
        ]
    )


@router.put("/{query_id}/ratings", response_model=RatingsChanged)
def put_ratings(
    query: QueryDep, body: RatingsPut, case: CaseDep, user: CurrentUser, session: SessionDep
) -> RatingsChanged:
    """Upsert ratings (null deletes) and re-score the query in the latest run."""
    rated = rating_service.rate(
        session=session, case=case, query=query, user=user, ratings=body.ratings
    )
    ratings = [RatingRead(doc_id=d, rating=r) for d, r in sorted(rated.ratings.items())]
    run, row = rated.run, rated.row
    if not rated.rescored or run is None or row is None:
        return RatingsChanged(ratings=ratings, query_score=None, case_score=None)
    return RatingsChanged(
        ratings=ratings,
        query_score=QueryScore(
            run_id=run.id,
            status=row.status,
            score=row.score,
            raw_score=row.raw_score,
            reason=row.reason or row.error,
        ),
        case_score=run.case_score,
    )

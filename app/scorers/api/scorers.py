"""Scorers and stateless scoring."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.scorers import service
from app.scorers.deps import ScorerDep
from app.scorers.schemas import ScorerCreate, ScoreRequest, ScoreResult, ScorerRead, ScorerUpdate
from app.web_common.deps import SessionDep
from app.web_common.owned import Owned, OwnedSchemas, OwnedService, RouteDocs, add_owned_routes

router = APIRouter(tags=["scorers"])


add_owned_routes(
    router,
    Owned("scorer", "scorers", "/scorers/{scorer_id}", user=CurrentUser, item=ScorerDep),
    OwnedSchemas(read=ScorerRead, create=ScorerCreate, update=ScorerUpdate),
    OwnedService(
        service.to_read,
        service.list_scorers,
        service.create_scorer,
        service.update_scorer,
        service.delete_scorer,
    ),
    RouteDocs(
        list="Return the built-in presets and the caller's scorers.",
        create="Create a scorer; JavaScript with a syntax error is refused with its line.",
        get="Return one scorer.",
        update="Change a scorer of the caller's (or shared with them).",
        delete="Delete one of the caller's scorers that no case uses (its owner only).",
    ),
)


@router.post("/score", response_model=ScoreResult)
def score(body: ScoreRequest, user: CurrentUser, session: SessionDep) -> ScoreResult:
    """Score one ranking with a stored scorer or one given inline; nothing is stored."""
    outcome = service.score_request(session=session, user=user, body=body)
    return ScoreResult(
        status=outcome.status,
        score=outcome.score,
        raw_score=outcome.raw_score,
        reason=outcome.reason,
        log=list(outcome.log),
    )

"""Scorers and stateless scoring."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.scorers import service
from app.scorers.deps import ScorerDep
from app.scorers.schemas import ScorerCreate, ScoreRequest, ScoreResult, ScorerRead, ScorerUpdate
from app.web_common.deps import SessionDep

router = APIRouter(tags=["scorers"])


@router.get("/scorers", response_model=list[ScorerRead])
def list_scorers(user: CurrentUser, session: SessionDep) -> list[ScorerRead]:
    """Return the built-in presets and the caller's scorers."""
    return [service.to_read(s) for s in service.list_scorers(session=session, user=user)]


@router.post("/scorers", response_model=ScorerRead, status_code=201)
def create_scorer(body: ScorerCreate, user: CurrentUser, session: SessionDep) -> ScorerRead:
    """Create a scorer; JavaScript with a syntax error is refused with its line."""
    return service.to_read(service.create_scorer(session=session, user=user, body=body))


@router.get("/scorers/{scorer_id}", response_model=ScorerRead)
def get_scorer(scorer: ScorerDep) -> ScorerRead:
    """Return one scorer."""
    return service.to_read(scorer)


@router.patch("/scorers/{scorer_id}", response_model=ScorerRead)
def update_scorer(
    body: ScorerUpdate, scorer: ScorerDep, user: CurrentUser, session: SessionDep
) -> ScorerRead:
    """Change a scorer of the caller's (or shared with them)."""
    return service.to_read(
        service.update_scorer(session=session, user=user, scorer=scorer, body=body)
    )


@router.delete("/scorers/{scorer_id}", status_code=204)
def delete_scorer(scorer: ScorerDep, user: CurrentUser, session: SessionDep) -> None:
    """Delete one of the caller's scorers that no case uses (its owner only)."""
    service.delete_scorer(session=session, user=user, scorer=scorer)


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

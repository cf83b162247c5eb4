"""The cases list page: each case's score, score history and counts, and the new-case form's
choices; it feeds the HTML page (cases/web.py) and its JSON twin (cases/pages_api.py)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import access
from app.cases import service as case_service
from app.cases.case_runs import case_run
from app.cases.pages.schemas import CaseRow, CasesPage, ScorePoint, TeamOption
from app.endpoints import service as endpoint_service
from app.models import Case, Run, User
from app.schedules import service as schedule_service
from app.scorers import service as scorer_service
from app.teams import service as team_service

__all__ = ["cases_page", "team_filter"]

SPARK_RUNS = 20


def cases_page(*, session: Session, user: User, show: str = "all") -> CasesPage:
    """Return the cases list: scores, score history, counts, and the new-case form's choices.

    `show` filters it: "all", "mine" (the user's own) or "team-<id>" (shared with that team).
    """
    cases = team_filter(access.visible_cases(session=session, user=user), user, show)
    ids = [c.id for c in cases]
    stats = case_service.case_stats(session=session, case_ids=ids)
    history = _score_history(session=session, case_ids=ids, per_case=SPARK_RUNS)
    counts = _latest_counts(session=session, case_ids=ids)
    upcoming = schedule_service.next_runs(session=session, case_ids=ids)
    rows = [
        CaseRow(
            id=c.id,
            name=c.name,
            last_score=stats[c.id].last_score,
            last_run_at=stats[c.id].last_run_at,
            query_count=stats[c.id].query_count,
            aggregate=c.aggregate,
            **counts.get(c.id, {}),
            history=history.get(c.id, []),
            mine=c.owner_id == user.id,
            team_ids=[t.id for t in c.teams],
            next_run_at=upcoming.get(c.id),
        )
        for c in cases
    ]
    return CasesPage(
        cases=rows,
        endpoints=endpoint_service.endpoint_options(session=session, user=user),
        scorers=scorer_service.scorer_options(session=session, user=user),
        default_templates=dict(endpoint_service.DEFAULT_TEMPLATES),
        default_scorer_id=scorer_service.default_scorer(session=session).id,
        teams=[
            TeamOption(id=t.id, name=t.name)
            for t in team_service.list_teams(session=session, user=user)
        ],
        show=show,
    )


def team_filter(cases: list[Case], user: User, show: str) -> list[Case]:
    """Keep the cases that `show` asks for: all, the user's own, or one team's."""
    if show == "mine":
        return [c for c in cases if c.owner_id == user.id]
    if show.startswith("team-") and show[5:].isdigit():
        team_id = int(show[5:])
        return [c for c in cases if any(t.id == team_id for t in c.teams)]
    return cases


def _latest_counts(*, session: Session, case_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Return the query counts of each case's latest finished run (the one its score is of)."""
    if not case_ids:
        return {}
    latest = (
        select(func.max(Run.id)).where(Run.case_id.in_(case_ids), case_run()).group_by(Run.case_id)
    )
    stmt = select(Run.case_id, Run.scored, Run.unscored, Run.errors, Run.total).where(
        Run.id.in_(latest)
    )
    return {
        case_id: {
            "last_scored": scored,
            "last_unscored": unscored,
            "last_errors": errors,
            "last_total": total,
        }
        for case_id, scored, unscored, errors, total in session.execute(stmt)
    }


def _score_history(
    *, session: Session, case_ids: Sequence[int], per_case: int
) -> dict[int, list[ScorePoint]]:
    if not case_ids:
        return {}
    newest = func.row_number().over(partition_by=Run.case_id, order_by=Run.id.desc()).label("n")
    ranked = (
        select(Run.case_id, Run.id, Run.case_score, newest)
        # A finished run without a score stays in: the sparkline shows it as a gap.
        .where(Run.case_id.in_(case_ids), case_run())
        .subquery()
    )
    stmt = (
        select(ranked.c.case_id, ranked.c.id, ranked.c.case_score)
        .where(ranked.c.n <= per_case)
        .order_by(ranked.c.case_id, ranked.c.id)
    )
    result: dict[int, list[ScorePoint]] = {}
    for case_id, run_id, score in session.execute(stmt):
        result.setdefault(case_id, []).append(ScorePoint(run_id=run_id, score=score))
    return result

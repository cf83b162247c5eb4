"""The scorers list and the scorer editor, with its "try it on a query" panel."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.access import valid_id, visible_case, visible_clause
from app.errors import NotFound
from app.models import Case, Query, Scorer, User
from app.runs import service as run_service
from app.runs.scoring_input import stored_inputs
from app.runs.stored_results import latest_row
from app.scorers import service as scorer_service
from app.scorers.pages.schemas import ScorerPage, ScorersPage, TryCase, TryOutcome, TryQueryOption
from app.scoring import ScorerConfig, score_queries
from app.vocabulary import QueryStatus

__all__ = ["scorer_page", "scorers_page", "try_scorer"]

TRY_QUERIES_PER_CASE = 100


def scorers_page(*, session: Session, user: User) -> ScorersPage:
    """Return the built-in presets and the user's own scorers."""
    reads = [
        scorer_service.to_read(s) for s in scorer_service.list_scorers(session=session, user=user)
    ]
    return ScorersPage(
        presets=[s for s in reads if s.builtin], own=[s for s in reads if not s.builtin]
    )


def scorer_page(*, session: Session, user: User, scorer: Scorer | None) -> ScorerPage:
    """Return the scorer editor: the scorer (None when new) and queries to try it on."""
    cases = session.execute(
        select(Case.id, Case.name).where(visible_clause(Case, user=user)).order_by(Case.id.desc())
    ).all()
    by_case: dict[int, list[TryQueryOption]] = {c.id: [] for c in cases}
    if cases:
        numbered = (
            func.row_number()
            .over(partition_by=Query.case_id, order_by=(Query.position, Query.id))
            .label("n")
        )
        ranked = (
            select(Query.case_id, Query.id, Query.text, Query.position, numbered)
            .where(Query.case_id.in_(list(by_case)))
            .subquery()
        )
        stmt = (
            select(ranked.c.case_id, ranked.c.id, ranked.c.text)
            .where(ranked.c.n <= TRY_QUERIES_PER_CASE)
            .order_by(ranked.c.case_id, ranked.c.position, ranked.c.id)
        )
        for case_id, query_id, text in session.execute(stmt):
            by_case[case_id].append(TryQueryOption(id=query_id, text=text))
    return ScorerPage(
        scorer=scorer_service.to_read(scorer) if scorer is not None else None,
        try_cases=[TryCase(id=c.id, name=c.name, queries=by_case[c.id]) for c in cases],
    )


def try_scorer(*, session: Session, user: User, config: ScorerConfig, query_id: int) -> TryOutcome:
    """Score the latest results and current ratings of a query of one of the user's cases with
    a scorer, storing nothing."""
    query = session.get(Query, query_id) if valid_id(query_id) else None
    try:
        case = visible_case(session=session, user=user, case_id=query.case_id if query else 0)
    except NotFound:
        # Name only what the user sent: another user's case id must not show through.
        raise NotFound(f"No query with id {query_id}.") from None
    assert query is not None
    run = run_service.latest_finished_run(session=session, case=case)
    row = latest_row(session=session, run=run, query=query)
    if run is None or row is None:
        return TryOutcome(
            query_id=query.id,
            text=query.text,
            status=QueryStatus.ERROR,
            score=None,
            raw_score=None,
            log=[],
            run_id=None,
            reason="This query has no results yet: run its case first.",
        )
    stored = stored_inputs(
        session=session, case=case, query_ids=[query.id], query_options={query.id: query.options}
    ).input_of(row)
    outcome = score_queries(config, [stored])[0]
    return TryOutcome(
        query_id=query.id,
        text=query.text,
        status=outcome.status,
        score=outcome.score,
        raw_score=outcome.raw_score,
        reason=outcome.reason,
        log=[str(line) for line in outcome.log],
        run_id=run.id,
    )

"""The cases list and the case page: scores, history, the query list and the settings' choices.

One function per page or partial, feeding both the HTML page (cases/web.py) and its JSON twin
(cases/pages_api.py), so that both show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import access
from app.books import sync as book_sync
from app.cases import history as history_service
from app.cases import service as case_service
from app.cases.metric_panel import metric_panel, tag_query_ids
from app.cases.page_schemas import (
    PER_PAGE,
    CaseHistory,
    CasePage,
    CaseRow,
    CasesPage,
    QueryList,
    QueryRow,
    QuerySort,
    ScaleMismatch,
    ScorePoint,
    TeamOption,
)
from app.cases.schemas import TryRead
from app.endpoints import service as endpoint_service
from app.models import Case, Query, Rating, Run, RunQuery, Scorer, User
from app.runs import case_data
from app.runs import service as run_service
from app.runs.metrics import metric_defs, metric_ids, scores_of_row
from app.runs.schemas import RunSummary
from app.runs.score_panel import score_of
from app.schedules import notes
from app.schedules import service as schedule_service
from app.scorers import service as scorer_service
from app.teams import service as team_service
from app.vocabulary import ACTIVE_RUN_STATUSES, QueryStatus, RunStatus

__all__ = [
    "QUERY_SORT_LABELS",
    "case_history",
    "case_page",
    "case_query_list",
    "cases_page",
    "query_list",
]

SPARK_RUNS = 20
# The case header warns once this share of the case's ratings lies off the scorer's scale:
# a stray rating is marked on its query's page, a case rated on another scale is the case's.
MANY_OFF_SCALE = 0.1
HISTORY_RUNS = 50
QUERY_SORT_LABELS: dict[QuerySort, str] = {
    "position": "Position",
    "score": "Score, lowest first",
    "score_desc": "Score, highest first",
    "text": "Text",
}


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
        select(func.max(Run.id))
        .where(Run.case_id.in_(case_ids), Run.status == RunStatus.FINISHED)
        .group_by(Run.case_id)
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
        .where(Run.case_id.in_(case_ids), Run.status == RunStatus.FINISHED)
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


def case_page(
    *,
    session: Session,
    user: User,
    case: Case,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    tag: str = "",
    metric: int | None = None,
) -> CasePage:
    """Return the case page: score, runs, one page of the query list and the settings.

    ``tag`` keeps the queries with that tag; ``metric`` (a scorer id) is what the score
    sorts sort by, instead of the primary scorer.
    """
    read = case_service.to_read(session=session, case=case)
    current = case_service.current_try(session=session, case=case)
    scorer = case.scorer
    latest = run_service.latest_finished_run(session=session, case=case)
    k = scorer_service.scorer_k(scorer, rows=current.rows)
    scale = scorer_service.scale_entries(scorer)
    return CasePage(
        case=read,
        current_try=TryRead.model_validate(current),
        scorer=scorer_service.to_read(scorer),
        scale=scale,
        zero_gives_ten=scorer_service.zero_gives_ten(scale),
        k=k,
        score=score_of(case_id=case.id, run=latest),
        active_run=_active_run(session=session, case=case),
        queries=query_list(
            session=session,
            case=case,
            run=latest,
            k=k,
            sort=sort,
            q=q,
            page=page,
            tag=tag,
            metric=metric,
        ),
        history=case_history(session=session, case=case),
        endpoints=endpoint_service.endpoint_options(session=session, user=user),
        scorers=scorer_service.scorer_options(session=session, user=user),
        ratings_source=book_sync.source_read(session=session, case=case),
        scale_mismatch=scale_mismatch(
            session=session, case=case, scale=[entry.value for entry in scale]
        ),
        metrics=metric_panel(session=session, case=case, latest=latest),
    )


def scale_mismatch(*, session: Session, case: Case, scale: Sequence[float]) -> ScaleMismatch | None:
    """Return how many of the case's ratings lie off the scale, when that is many of them."""
    stmt = (
        select(Rating.rating, func.count())
        .join(Query, Query.id == Rating.query_id)
        .where(Query.case_id == case.id)
        .group_by(Rating.rating)
    )
    counts = {float(rating): n for rating, n in session.execute(stmt)}
    on_scale = {float(v) for v in scale}
    rated = sum(counts.values())
    off = sum(n for rating, n in counts.items() if rating not in on_scale)
    if not rated or not on_scale or off < rated * MANY_OFF_SCALE:
        return None
    return ScaleMismatch(
        off_scale=off,
        rated=rated,
        ratings_low=min(counts),
        ratings_high=max(counts),
        scale_low=min(on_scale),
        scale_high=max(on_scale),
    )


def case_query_list(
    *,
    session: Session,
    case: Case,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    tag: str = "",
    metric: int | None = None,
) -> QueryList:
    """Return one page of the case's query list against its latest finished run."""
    current = case_service.current_try(session=session, case=case)
    k = scorer_service.scorer_k(case.scorer, rows=current.rows)
    latest = run_service.latest_finished_run(session=session, case=case)
    return query_list(
        session=session,
        case=case,
        run=latest,
        k=k,
        sort=sort,
        q=q,
        page=page,
        tag=tag,
        metric=metric,
    )


def case_history(*, session: Session, case: Case, metric: int | None = None) -> CaseHistory:
    """Return the latest runs and the case score over the finished ones (``metric``: the
    recorded score of that metric, a scorer id, instead of the primary's)."""
    runs = run_service.list_runs(session=session, case=case, limit=HISTORY_RUNS)
    metrics = {
        m.scorer_id: m.name
        for m in metric_defs(session=session, ids=[case.scorer_id, *(case.metric_scorer_ids or [])])
    }
    if metric not in metrics or metric == case.scorer_id:
        metric = None
    return CaseHistory(
        case_id=case.id,
        metric=metric,
        metric_names=metrics,
        points=[
            # A run without a score (or a failed one) keeps its place: the chart marks it.
            ScorePoint(
                run_id=r.id,
                score=_recorded_of(r, metric) if r.status == RunStatus.FINISHED else None,
                scored=r.scored,
                total=r.total,
                errors=r.errors,
                failed=r.status == RunStatus.FAILED,
            )
            for r in reversed(runs)
            if r.status in (RunStatus.FINISHED, RunStatus.FAILED)
        ],
        runs=[run_service.summary(r) for r in runs],
        knobs=history_service.effective_knobs(session=session, case_id=case.id, runs=runs),
        scorer_names=_scorer_names(
            session=session, ids={r.recorded_scorer_id for r in runs} | {r.scorer_id for r in runs}
        ),
        annotations=notes.timeline(session=session, case=case),
    )


def _recorded_of(run: Run, metric: int | None) -> float | None:
    """Return what the run recorded for the metric when it finished (None: not scored)."""
    if metric is None or metric == run.recorded_scorer_id:
        return run.recorded_score
    found = (m for m in run.recorded_metrics or [] if m.get("scorer_id") == metric)
    return next((m.get("case_score") for m in found), None)


def _scorer_names(*, session: Session, ids: set[int | None]) -> dict[int, str]:
    wanted = [i for i in ids if i is not None]
    if not wanted:
        return {}
    stmt = select(Scorer.id, Scorer.name).where(Scorer.id.in_(wanted))
    return {scorer_id: name for scorer_id, name in session.execute(stmt)}


def _active_run(*, session: Session, case: Case) -> RunSummary | None:
    run = session.scalar(
        select(Run)
        .where(Run.case_id == case.id, Run.status.in_(ACTIVE_RUN_STATUSES))
        .order_by(Run.id.desc())
        .limit(1)
    )
    return run_service.summary(run) if run else None


def _sort_order(sort: QuerySort, metric: Any = None) -> list[Any]:
    # Columns and expressions mixed: SQLAlchemy's own order_by takes them as Any-like.
    by_position: list[Any] = [Query.position, Query.id]
    score: Any = RunQuery.score if metric is None else metric
    if sort == "score":
        return [score.is_(None), score, *by_position]
    if sort == "score_desc":
        return [score.is_(None), score.desc(), *by_position]
    if sort == "text":
        return [func.lower(Query.text), Query.id]
    return by_position


def query_list(
    *,
    session: Session,
    case: Case,
    run: Run | None,
    k: int,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    per_page: int = PER_PAGE,
    tag: str = "",
    metric: int | None = None,
) -> QueryList:
    """Return one page of the case's queries with their latest scores and unrated counts.

    Four statements whatever the case's size: the count, the page's rows, the page's
    ranked doc ids, and the page's ratings.
    """
    wanted = Query.case_id == case.id
    if q.strip():
        wanted = wanted & Query.text.icontains(q.strip(), autoescape=True)
    if tag:
        wanted = wanted & Query.id.in_(tag_query_ids(session=session, case=case, tag=tag))
    if run is None or metric == run.scorer_id or metric not in metric_ids(run):
        metric = None  # the primary (or no run): its score column sorts
    total = session.scalar(select(func.count()).select_from(Query).where(wanted)) or 0
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page), pages)
    run_id = run.id if run is not None else -1
    stmt = (
        select(
            Query.id,
            Query.text,
            Query.position,
            Query.notes,
            Query.information_need,
            RunQuery.status,
            RunQuery.score,
            RunQuery.num_found,
            RunQuery.error,
            Query.tags,
            Query.weight,
            RunQuery.metric_scores,
        )
        .outerjoin(RunQuery, (RunQuery.query_id == Query.id) & (RunQuery.run_id == run_id))
        .where(wanted)
        .order_by(*_sort_order(sort, None if metric is None else _metric_column(metric)))
        .limit(per_page)
        .offset((page - 1) * per_page)
    )
    rows = session.execute(stmt).all()
    ids = [row.id for row in rows]
    unrated = _unrated_counts(session=session, run_id=run_id, query_ids=ids, k=k)
    histories = history_service.score_histories(session=session, case_id=case.id, query_ids=ids)
    items = [
        QueryRow(
            id=row.id,
            text=row.text,
            position=row.position,
            status=row.status,
            score=row.score,
            num_found=row.num_found,
            # An errored query has no unrated count to speak of: its error says what happened.
            unrated_top_k=None if row.status == QueryStatus.ERROR else unrated.get(row.id),
            error=row.error,
            notes=row.notes,
            information_need=row.information_need,
            history=histories.get(row.id, []),
            tags=list(row.tags or []),
            weight=row.weight if row.weight is not None else 1.0,
            metric_scores=_metric_scores(run, row),
        )
        for row in rows
    ]
    return QueryList(
        items=items,
        sort=sort,
        q=q,
        page=page,
        per_page=per_page,
        total=total,
        pages=pages,
        tag=tag,
        metric=metric,
        metric_names=(
            {}
            if run is None
            else {
                str(m.scorer_id): m.name for m in metric_defs(session=session, ids=metric_ids(run))
            }
        ),
    )


def _metric_column(scorer_id: int) -> Any:
    """Return a query row's score under one metric, as a number SQL can sort."""
    return RunQuery.metric_scores[str(scorer_id)].as_float()


def _metric_scores(run: Run | None, row: Any) -> dict[str, float | None]:
    if run is None or row.status is None:
        return {}
    scores = scores_of_row(run.scorer_id, row.status, row.score, row.metric_scores)
    return {str(k): v for k, v in scores.items()}


def _unrated_counts(
    *, session: Session, run_id: int, query_ids: Sequence[int], k: int
) -> dict[int, int]:
    if not query_ids or run_id < 0:
        return {}
    ranked = session.execute(
        select(RunQuery.query_id, RunQuery.docs).where(
            RunQuery.run_id == run_id, RunQuery.query_id.in_(query_ids)
        )
    ).all()
    ratings = case_data.ratings_of(session=session, query_ids=query_ids)
    result: dict[int, int] = {}
    for query_id, docs in ranked:
        if query_id is None:
            continue
        rated = ratings.get(query_id, {})
        result[query_id] = sum(1 for d in (docs or [])[:k] if d.get("id") not in rated)
    return result

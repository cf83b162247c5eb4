"""The case page: score, runs, the query list, metrics, history and the settings' choices.

One function per page or partial, feeding both the HTML page (cases/web.py) and its JSON twin
(cases/pages_api.py), so that both show the same numbers. The cases list is
cases/cases_list.py, the query list cases/query_list.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.books import sync as book_sync
from app.cases import notes
from app.cases import service as case_service
from app.cases.pages.metric_panel import metric_panel
from app.cases.pages.query_list import query_list
from app.cases.pages.schemas import CaseHistory, CasePage, QuerySort, ScaleMismatch, ScorePoint
from app.cases.pages.score_panel import score_of
from app.cases.schemas import TryRead
from app.endpoints import service as endpoint_service
from app.models import Case, Query, Rating, Run, Scorer, User
from app.runs import service as run_service
from app.runs.metrics import metric_defs
from app.runs.schemas import RunSummary
from app.runs.stored_results import effective_knobs
from app.scorers import service as scorer_service
from app.vocabulary import ACTIVE_RUN_STATUSES, RunStatus

__all__ = ["case_history", "case_page", "scale_mismatch"]

# The case header warns once this share of the case's ratings lies off the scorer's scale:
# a stray rating is marked on its query's page, a case rated on another scale is the case's.
MANY_OFF_SCALE = 0.1
HISTORY_RUNS = 50


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
                aggregate=r.recorded_aggregate,
            )
            for r in reversed(runs)
            if r.status in (RunStatus.FINISHED, RunStatus.FAILED)
        ],
        runs=[run_service.summary(r) for r in runs],
        knobs=effective_knobs(session=session, case_id=case.id, runs=runs),
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

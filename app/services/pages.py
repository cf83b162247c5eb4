"""Page data: one function per page, feeding both the HTML page and its JSON twin.

Nothing here renders; the functions gather what a page shows into a Pydantic model so
that `app/web` (templates) and `app/api/pages.py` (JSON) show the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Case, Query, Run, RunQuery, Scorer, User
from app.schemas.cases import QueryRead, TryRead
from app.schemas.pages import (
    PER_PAGE,
    CaseHistory,
    CasePage,
    CaseRow,
    CaseScore,
    CasesPage,
    DocField,
    EndpointOption,
    EndpointsPage,
    QueryList,
    QueryResults,
    QueryRow,
    QuerySort,
    ResultDoc,
    ScaleEntry,
    ScorePoint,
    ScorerOption,
    ScorerPage,
    ScorersPage,
    TryCase,
    TryOutcome,
    TryQueryOption,
)
from app.schemas.runs import RunSummary
from app.scoring import ScorerConfig, score_queries
from app.search import FieldSpec, FieldSpecError, parse_field_spec
from app.services import cases as case_service
from app.services import endpoints as endpoint_service
from app.services import queries as query_service
from app.services import runs as run_service
from app.services import scorers as scorer_service

__all__ = [
    "case_history",
    "case_page",
    "case_query_list",
    "case_score",
    "cases_page",
    "endpoints_page",
    "query_list",
    "query_results",
    "scale_entries",
    "score_of",
    "scorer_k",
    "scorer_page",
    "scorers_page",
    "try_scorer",
]

SPARK_RUNS = 20
HISTORY_RUNS = 50
TRY_QUERIES_PER_CASE = 100
IMAGE_PREFIXES = ("http://", "https://", "/")


def cases_page(*, session: Session, user: User) -> CasesPage:
    """Return the cases list: scores, score history, counts, and the new-case form's choices."""
    cases = case_service.list_cases(session=session, user=user)
    ids = [c.id for c in cases]
    stats = case_service.case_stats(session=session, case_ids=ids)
    history = _score_history(session=session, case_ids=ids, per_case=SPARK_RUNS)
    rows = [
        CaseRow(
            id=c.id,
            name=c.name,
            last_score=stats[c.id].last_score,
            last_run_at=stats[c.id].last_run_at,
            query_count=stats[c.id].query_count,
            history=history.get(c.id, []),
        )
        for c in cases
    ]
    return CasesPage(
        cases=rows,
        endpoints=_endpoint_options(session=session, user=user),
        scorers=_scorer_options(session=session, user=user),
        default_templates=dict(endpoint_service.DEFAULT_TEMPLATES),
        default_scorer_id=scorer_service.default_scorer(session=session).id,
    )


def _score_history(
    *, session: Session, case_ids: Sequence[int], per_case: int
) -> dict[int, list[ScorePoint]]:
    if not case_ids:
        return {}
    newest = func.row_number().over(partition_by=Run.case_id, order_by=Run.id.desc()).label("n")
    ranked = (
        select(Run.case_id, Run.id, Run.case_score, newest)
        .where(Run.case_id.in_(case_ids), Run.status == "finished", Run.case_score.is_not(None))
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


def _endpoint_options(*, session: Session, user: User) -> list[EndpointOption]:
    return [
        EndpointOption(id=e.id, name=e.name, engine=e.engine)
        for e in endpoint_service.list_endpoints(session=session, user=user)
    ]


def _scorer_options(*, session: Session, user: User) -> list[ScorerOption]:
    return [
        ScorerOption(id=s.id, name=s.name, builtin=s.owner_id is None)
        for s in scorer_service.list_scorers(session=session, user=user)
    ]


def case_page(
    *,
    session: Session,
    user: User,
    case: Case,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
) -> CasePage:
    """Return the case page: score, runs, one page of the query list and the settings."""
    read = case_service.to_read(session=session, case=case)
    current = case_service.current_try(session=session, case=case)
    scorer = _scorer_of(session=session, case=case)
    latest = run_service.latest_finished_run(session=session, case=case)
    k = scorer_k(scorer, rows=current.rows)
    return CasePage(
        case=read,
        current_try=TryRead.model_validate(current),
        scorer=scorer_service.to_read(scorer),
        scale=scale_entries(scorer),
        k=k,
        score=score_of(case_id=case.id, run=latest),
        active_run=_active_run(session=session, case=case),
        queries=query_list(session=session, case=case, run=latest, k=k, sort=sort, q=q, page=page),
        history=case_history(session=session, case=case),
        endpoints=_endpoint_options(session=session, user=user),
        scorers=_scorer_options(session=session, user=user),
    )


def case_query_list(
    *, session: Session, case: Case, sort: QuerySort = "position", q: str = "", page: int = 1
) -> QueryList:
    """Return one page of the case's query list against its latest finished run."""
    current = case_service.current_try(session=session, case=case)
    k = scorer_k(_scorer_of(session=session, case=case), rows=current.rows)
    latest = run_service.latest_finished_run(session=session, case=case)
    return query_list(session=session, case=case, run=latest, k=k, sort=sort, q=q, page=page)


def score_of(*, case_id: int, run: Run | None) -> CaseScore:
    """Return the case score panel's numbers from a finished run (or none yet)."""
    if run is None:
        return CaseScore(
            case_id=case_id, run_id=None, case_score=None, scored=0, unscored=0, errors=0
        )
    return CaseScore(
        case_id=case_id,
        run_id=run.id,
        case_score=run.case_score,
        scored=run.scored,
        unscored=run.unscored,
        errors=run.errors,
    )


def case_score(*, session: Session, case: Case) -> CaseScore:
    """Return the case score of the latest finished run with its unscored and error counts."""
    return score_of(
        case_id=case.id, run=run_service.latest_finished_run(session=session, case=case)
    )


def case_history(*, session: Session, case: Case) -> CaseHistory:
    """Return the latest runs and the case score over the finished ones."""
    runs = run_service.list_runs(session=session, case=case, limit=HISTORY_RUNS)
    return CaseHistory(
        case_id=case.id,
        points=[
            ScorePoint(run_id=r.id, score=r.case_score)
            for r in reversed(runs)
            if r.status == "finished" and r.case_score is not None
        ],
        runs=[run_service.summary(r) for r in runs],
        scorer_names=_scorer_names(session=session, ids={r.scorer_id for r in runs}),
    )


def _scorer_names(*, session: Session, ids: set[int | None]) -> dict[int, str]:
    wanted = [i for i in ids if i is not None]
    if not wanted:
        return {}
    stmt = select(Scorer.id, Scorer.name).where(Scorer.id.in_(wanted))
    return {scorer_id: name for scorer_id, name in session.execute(stmt)}


def _scorer_of(*, session: Session, case: Case) -> Scorer:
    scorer = session.get(Scorer, case.scorer_id)
    assert scorer is not None  # the foreign key is RESTRICT: a case always has its scorer
    return scorer


def _active_run(*, session: Session, case: Case) -> RunSummary | None:
    run = session.scalar(
        select(Run)
        .where(Run.case_id == case.id, Run.status.in_(run_service.ACTIVE))
        .order_by(Run.id.desc())
        .limit(1)
    )
    return run_service.summary(run) if run else None


def scorer_k(scorer: Scorer, *, rows: int) -> int:
    """Return the depth the scorer looks at: its parameter k, else the case's rows."""
    k = (scorer.params or {}).get("k")
    return int(k) if isinstance(k, int | float) and k >= 1 else rows


def _sort_order(sort: QuerySort) -> list[Any]:
    # Columns and expressions mixed: SQLAlchemy's own order_by takes them as Any-like.
    by_position: list[Any] = [Query.position, Query.id]
    if sort == "score":
        return [RunQuery.score.is_(None), RunQuery.score, *by_position]
    if sort == "score_desc":
        return [RunQuery.score.is_(None), RunQuery.score.desc(), *by_position]
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
) -> QueryList:
    """Return one page of the case's queries with their latest scores and unrated counts.

    Four statements whatever the case's size: the count, the page's rows, the page's
    ranked doc ids, and the page's ratings.
    """
    wanted = Query.case_id == case.id
    if q.strip():
        wanted = wanted & Query.text.icontains(q.strip(), autoescape=True)
    total = session.scalar(select(func.count()).select_from(Query).where(wanted)) or 0
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page), pages)
    run_id = run.id if run is not None else -1
    stmt = (
        select(
            Query.id,
            Query.text,
            Query.position,
            RunQuery.status,
            RunQuery.score,
            RunQuery.num_found,
            RunQuery.error,
        )
        .outerjoin(RunQuery, (RunQuery.query_id == Query.id) & (RunQuery.run_id == run_id))
        .where(wanted)
        .order_by(*_sort_order(sort))
        .limit(per_page)
        .offset((page - 1) * per_page)
    )
    rows = session.execute(stmt).all()
    ids = [row.id for row in rows]
    unrated = _unrated_counts(session=session, run_id=run_id, query_ids=ids, k=k)
    items = [
        QueryRow(
            id=row.id,
            text=row.text,
            position=row.position,
            status=row.status,
            score=row.score,
            num_found=row.num_found,
            unrated_top_k=unrated.get(row.id),
            error=row.error,
        )
        for row in rows
    ]
    return QueryList(
        items=items, sort=sort, q=q, page=page, per_page=per_page, total=total, pages=pages
    )


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
    ratings = query_service.ratings_of(session=session, query_ids=query_ids)
    result: dict[int, int] = {}
    for query_id, docs in ranked:
        if query_id is None:
            continue
        rated = ratings.get(query_id, {})
        result[query_id] = sum(1 for d in (docs or [])[:k] if d.get("id") not in rated)
    return result


def scale_entries(scorer: Scorer) -> list[ScaleEntry]:
    """Return the scorer's scale with labels and the keyboard digit of each value.

    On a scale of whole numbers within 0-10 the digit is the value itself (0 means 10
    when the scale has 10 but no 0, as on Classic's 1-10); otherwise digits count the
    entries from 0.
    """
    values = [float(v) for v in scorer.scale]
    labels = scorer.scale_labels or {}
    by_value = all(v.is_integer() and 0 <= v <= 10 for v in values) and not (
        0.0 in values and 10.0 in values
    )
    entries = []
    for index, value in enumerate(values):
        if by_value:
            digit: int | None = int(value) % 10
        else:
            digit = index if index < 10 else None
        entries.append(ScaleEntry(value=value, label=_label(labels, value), digit=digit))
    return entries


def _label(labels: Mapping[str, Any], value: float) -> str:
    text = f"{value:g}"
    for key in (text, str(value), str(int(value)) if value.is_integer() else text):
        if labels.get(key):
            return str(labels[key])
    return text


def query_results(*, session: Session, case: Case, query: Query) -> QueryResults:
    """Return one query's ranked docs from the latest finished run with current ratings."""
    scorer = _scorer_of(session=session, case=case)
    run = run_service.latest_finished_run(session=session, case=case)
    row = (
        session.scalar(
            select(RunQuery).where(RunQuery.run_id == run.id, RunQuery.query_id == query.id)
        )
        if run is not None
        else None
    )
    ratings = query_service.ratings_of(session=session, query_ids=[query.id])[query.id]
    base = QueryResults(
        case_id=case.id,
        query=QueryRead.model_validate(query),
        run_id=None,
        status=None,
        score=None,
        num_found=None,
        reason=None,
        error=None,
        unrated_top_k=None,
        docs=[],
        scale=scale_entries(scorer),
    )
    if run is None or row is None:
        return base
    spec = _field_spec(session=session, case=case, run=run)
    k = scorer_k(
        scorer, rows=case_service.get_try(session=session, case=case, number=run.try_number).rows
    )
    docs = [_result_doc(d, spec, ratings) for d in row.docs or []]
    return base.model_copy(
        update={
            "run_id": run.id,
            "status": row.status,
            "score": row.score,
            "num_found": row.num_found,
            "reason": row.reason,
            "error": row.error,
            "unrated_top_k": sum(1 for d in docs[:k] if d.rating is None),
            "docs": docs,
        }
    )


def _field_spec(*, session: Session, case: Case, run: Run) -> FieldSpec:
    chosen = case_service.get_try(session=session, case=case, number=run.try_number)
    try:
        return parse_field_spec(chosen.field_spec)
    except FieldSpecError:
        return FieldSpec()


def _result_doc(doc: Mapping[str, Any], spec: FieldSpec, ratings: Mapping[str, float]) -> ResultDoc:
    fields: Mapping[str, Any] = doc.get("fields") or {}
    title = fields.get(spec.title_field) if spec.title_field else None
    images = [
        str(fields[name])
        for name in (spec.thumb_field, spec.image_field)
        if name
        and isinstance(fields.get(name), str)
        and str(fields[name]).startswith(IMAGE_PREFIXES)
    ]
    shown = [
        DocField(name=name, value=_as_text(fields[name]))
        for name in spec.sub_fields
        if name in fields and name != spec.title_field
    ]
    doc_id = str(doc.get("id"))
    return ResultDoc(
        id=doc_id,
        rank=int(doc.get("rank") or 0),
        title=None if title is None else _as_text(title),
        fields=shown,
        images=images,
        rating=ratings.get(doc_id),
        explain=doc.get("explain"),
    )


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_as_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


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
    cases = case_service.list_cases(session=session, user=user)
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


def try_scorer(*, session: Session, config: ScorerConfig, case: Case, query: Query) -> TryOutcome:
    """Score one query's latest results and current ratings with a scorer, storing nothing."""
    run = run_service.latest_finished_run(session=session, case=case)
    row = (
        session.scalar(
            select(RunQuery).where(RunQuery.run_id == run.id, RunQuery.query_id == query.id)
        )
        if run is not None
        else None
    )
    if run is None or row is None:
        return TryOutcome(
            query_id=query.id,
            text=query.text,
            status="error",
            score=None,
            raw_score=None,
            log=[],
            run_id=None,
            reason="This query has no results yet: run its case first.",
        )
    ratings = query_service.ratings_of(session=session, query_ids=[query.id])[query.id]
    stored = run_service.stored_input(row, ratings, query.options or {}, case.options or {})
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


def endpoints_page(*, session: Session, user: User) -> EndpointsPage:
    """Return the user's search endpoints (secrets reduced to their presence)."""
    return EndpointsPage(
        endpoints=[
            endpoint_service.to_read(e)
            for e in endpoint_service.list_endpoints(session=session, user=user)
        ]
    )

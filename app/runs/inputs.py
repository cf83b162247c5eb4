"""Runs: what an executing run reads before it starts. Its plan: the case, try, endpoint,
scorer, metrics and queries as plain data, and for an engine that answers from a file,
that file's answers.

What the run then writes (its lease, heartbeats, results and ending) is app.runs.store's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.cases.tries import get_try
from app.endpoints import results as static_results
from app.endpoints.service import engine_config
from app.errors import NotFound
from app.models import Case, Query, Run, Scorer, SearchEndpoint, Try
from app.runs.metrics import metric_configs
from app.runs.plan import QueryPlan, RunPlan, RunSetupError
from app.scorers.config import config_of
from app.search import SearchResult, adapter_for


def load_plan(*, session: Session, run_id: int, query_ids: Sequence[int] | None = None) -> RunPlan:
    """Read the run's case, try, endpoint, scorer and queries into a plain plan.

    With ``query_ids`` (a chunk of a run executed by workers), the plan holds only those
    queries that still exist and carries the run's lease, which all of its chunks share.
    """
    run = find_run(session=session, run_id=run_id)
    case = session.get(Case, run.case_id)
    assert case is not None
    chosen = get_try(session=session, case=case, number=run.try_number)
    endpoint = session.get(SearchEndpoint, chosen.search_endpoint_id)
    scorer = session.get(Scorer, run.scorer_id) if run.scorer_id else None
    if endpoint is None or scorer is None:
        raise RunSetupError("The case's search endpoint or scorer no longer exists.")
    queries = _queries(session, case, query_ids)
    shared: dict[str, Any] = {} if query_ids is None or run.lease is None else {"lease": run.lease}
    if adapter_for(endpoint.engine).answers_from_file:  # read now, nothing to fetch
        shared["static_results"] = _file_answers(session, endpoint, chosen, queries)
    return RunPlan(
        run_id=run.id,
        endpoint=engine_config(endpoint, sandbox_owner=case.owner_id),
        template=run.query_template if run.query_template is not None else chosen.query_template,
        field_spec=chosen.field_spec,
        rows=chosen.rows,
        knobs=run.knobs if run.knobs is not None else (chosen.knobs or {}),
        case_options=case.options or {},
        scorer=config_of(scorer),
        queries=queries,
        explain=run.explain,
        owner_id=case.owner_id,
        scorer_id=scorer.id,
        metrics=metric_configs(session=session, run=run),
        **shared,
    )


def find_run(*, session: Session, run_id: int) -> Run:
    """Return the run with this id; NotFound when there is none (deleted with its case)."""
    run = session.get(Run, run_id) if valid_id(run_id) else None
    if run is None:
        raise NotFound(f"No run with id {run_id}.")
    return run


def _queries(session: Session, case: Case, query_ids: Sequence[int] | None) -> list[QueryPlan]:
    # Plain rows, not ORM objects: a plan may hold many thousand queries.
    stmt = select(Query.id, Query.text, Query.position, Query.options).where(
        Query.case_id == case.id
    )
    if query_ids is not None:
        stmt = stmt.where(Query.id.in_(list(query_ids)))
    return [
        QueryPlan(query_id=qid, text=text, position=position, options=options or {})
        for qid, text, position, options in session.execute(stmt.order_by(Query.position, Query.id))
    ]


def _file_answers(
    session: Session, endpoint: SearchEndpoint, chosen: Try, queries: list[QueryPlan]
) -> dict[int, SearchResult]:
    # The answers of the endpoint's result file, for the plan's queries.
    return static_results.results_for(
        session=session,
        endpoint_id=endpoint.id,
        queries=[(q.query_id, q.text) for q in queries],
        rows=chosen.rows,
    )

"""What an agent may do, as plain calls on a session: the tools' work behind the MCP server.

Every call takes the ``Actor`` (the user of the API key and the key's name and scopes),
checks the scope it needs, and marks what it writes as the agent's (``trigger: "agent"``
and the key's name on runs, sweeps, ratings and annotations). Errors are ``RelevoError``s
with a sentence; the MCP face turns them into tool errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app import access
from app.accounts import service as accounts
from app.accounts.scopes import split_scopes
from app.agents.heldout import held_out_ids
from app.cases import notes
from app.cases import service as case_service
from app.cases.pages import coverage as case_coverage
from app.cases.schemas import AnnotationCreate
from app.compare import service as compare_service
from app.compare.schemas import RunComparison
from app.errors import Forbidden, NotFound, RelevoError
from app.models import Annotation, Case, JudgeRun, Rating, Run, RunQuery, Sweep, User
from app.queries import flows as rating_service
from app.queries import service as query_service
from app.queries.schemas import RatingIn
from app.runs import service as run_service
from app.runs.stored_results import doc_title, field_spec_of
from app.sweeps import service as sweep_service
from app.sweeps.schemas import SweepCreate

__all__ = [
    "AGENT_TRIGGER",
    "Actor",
    "Unauthorized",
    "actor_for_key",
    "annotate",
    "case_detail",
    "case_of",
    "compare",
    "list_cases",
    "list_runs",
    "note",
    "query_results",
    "rate",
    "require",
    "run_detail",
]

AGENT_TRIGGER = "agent"
MAX_RUNS_LISTED = 200


class Unauthorized(RelevoError):
    """No live API key: the agent is not signed in."""

    status_code = 401


@dataclass(frozen=True)
class Actor:
    """Who is calling: the key's user, and the key's name and scopes."""

    user_id: int
    key_name: str
    scopes: tuple[str, ...]

    def user(self, session: Session) -> User:
        """Return the key's user in this session."""
        user = session.get(User, self.user_id)
        if user is None or user.is_disabled:
            raise Unauthorized("The API key's user no longer exists or is disabled.")
        return user


def actor_for_key(*, session: Session, key: str) -> Actor:
    """Return the actor of a live API key, else raise Unauthorized."""
    api_key = accounts.api_key_for(session=session, key=key.strip()) if key.strip() else None
    user = None if api_key is None else session.get(User, api_key.user_id)
    if api_key is None or user is None or user.is_disabled:
        raise Unauthorized(
            "Invalid, revoked or expired API key: give a Relevo API key (RELEVO_API_KEY, or "
            "'Authorization: Bearer <key>' over HTTP)."
        )
    return Actor(user_id=user.id, key_name=api_key.name, scopes=tuple(split_scopes(api_key.scopes)))


def require(actor: Actor, scope: str) -> None:
    """Refuse a call that needs a scope the key lacks, naming it."""
    if scope not in actor.scopes:
        has = ", ".join(actor.scopes) or "none"
        raise Forbidden(
            f"This tool needs the '{scope}' scope, which the API key '{actor.key_name}' lacks "
            f"(its scopes: {has}). Its owner can add it on the account page."
        )


def case_of(session: Session, actor: Actor, case_id: int) -> Case:
    return access.visible_case(session=session, user=actor.user(session), case_id=case_id)


def note(
    session: Session, *, case: Case, actor: Actor, text: str, run: Run | None = None
) -> Annotation:
    """Add an annotation that says what the agent did (on the run, at its end)."""
    at = datetime.now(UTC)
    if run is not None:
        at = run.finished_at or run.started_at or run.created_at or at
    note = Annotation(
        case_id=case.id,
        text=f"Agent {actor.key_name}: {text}"[:2000],
        at=at if at.tzinfo else at.replace(tzinfo=UTC),
        run_id=None if run is None else run.id,
        auto=False,
        created_by_id=actor.user_id,
        agent=actor.key_name,
    )
    session.add(note)
    return note


# Reading


def list_cases(*, session: Session, actor: Actor) -> dict[str, Any]:
    """Return the cases the key's user may see, with their latest scores."""
    require(actor, "read")
    reads = case_service.list_reads(session=session, user=actor.user(session))
    return {"cases": [r.model_dump(mode="json") for r in reads]}


def case_detail(*, session: Session, actor: Actor, case_id: int) -> dict[str, Any]:
    """Return a case with its latest run's scores per metric and tag, and its coverage."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    latest = run_service.latest_finished_run(session=session, case=case)
    metrics = [] if latest is None else run_service.metrics_read(session=session, run=latest)
    coverage = case_coverage.case_coverage(session=session, case=case)
    queries = query_service.list_queries(session=session, case=case)
    return {
        "case": case_service.to_read(session=session, case=case).model_dump(mode="json"),
        "latest_run": None
        if latest is None
        else run_service.summary(latest).model_dump(mode="json"),
        "metrics": [m.model_dump(mode="json") for m in metrics],
        "coverage": coverage.model_dump(mode="json"),
        "queries": [
            {"id": q.id, "text": q.text, "tags": list(q.tags or []), "weight": q.weight}
            for q in queries
        ],
        "held_out_query_ids": sorted(held_out_ids(case.id, [q.id for q in queries])),
    }


def list_runs(*, session: Session, actor: Actor, case_id: int, limit: int) -> dict[str, Any]:
    """Return the case's runs, newest first (drafts and sweeps' runs included)."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    runs = run_service.list_runs(session=session, case=case, limit=min(limit, MAX_RUNS_LISTED))
    return {"runs": [run_service.summary(r).model_dump(mode="json") for r in runs]}


def run_detail(*, session: Session, actor: Actor, case_id: int, run_id: int) -> dict[str, Any]:
    """Return a run with every query's outcome."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    run = run_service.get_run(session=session, case=case, run_id=run_id)
    return run_service.detail(session=session, run=run).model_dump(mode="json")


def compare(
    *, session: Session, actor: Actor, case_id: int, base_run_id: int, other_run_id: int
) -> RunComparison:
    """Return the comparison of two runs of the case (the compare contract)."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    return compare_service.compare_by_ids(
        session=session, case=case, base_id=base_run_id, other_id=other_run_id, sort="delta"
    )


def query_results(
    *, session: Session, actor: Actor, case_id: int, query_id: int, run_id: int | None
) -> dict[str, Any]:
    """Return one query's ranked docs in a run (default: the case's latest), with today's
    ratings and each doc's title."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    query = query_service.get_query(session=session, case=case, query_id=query_id)
    run = (
        run_service.latest_finished_run(session=session, case=case)
        if run_id is None
        else run_service.get_run(session=session, case=case, run_id=run_id)
    )
    if run is None:
        raise NotFound(f"Case {case.id} has no finished run yet: start one first.")
    row = session.scalar(
        select(RunQuery).where(RunQuery.run_id == run.id, RunQuery.query_id == query.id)
    )
    ratings = {r.doc_id: r.rating for r in query_service.list_ratings(session=session, query=query)}
    spec = field_spec_of(session=session, case=case, run=run)
    docs = [] if row is None else list(row.docs or [])
    return {
        "query": {"id": query.id, "text": query.text, "information_need": query.information_need},
        "run_id": run.id,
        "status": None if row is None else row.status,
        "score": None if row is None else row.score,
        "num_found": None if row is None else row.num_found,
        "error": None if row is None else row.error,
        "docs": [
            {
                "id": str(d.get("id")),
                "rank": d.get("rank"),
                "title": doc_title(d, spec),
                "rating": ratings.get(str(d.get("id"))),
                "fields": d.get("fields") or {},
            }
            for d in docs
        ],
        "ratings": [{"doc_id": k, "rating": v} for k, v in sorted(ratings.items())],
    }


# Writing


def rate(
    *,
    session: Session,
    actor: Actor,
    case_id: int,
    query_id: int,
    ratings: Sequence[RatingIn],
) -> dict[str, Any]:
    """Rate docs of a query (null clears) as the agent; the latest run is re-scored."""
    require(actor, "write")
    case = case_of(session, actor, case_id)
    query = query_service.get_query(session=session, case=case, query_id=query_id)
    rated = rating_service.rate(
        session=session, case=case, query=query, user=actor.user(session), ratings=ratings
    )
    written = [r.doc_id for r in ratings if r.rating is not None]
    if written:
        session.execute(
            update(Rating)
            .where(Rating.query_id == query.id, Rating.doc_id.in_(written))
            .values(agent=actor.key_name)
        )
    note(
        session,
        case=case,
        actor=actor,
        text=f"rated {len(ratings)} doc(s) of the query {query.text!r}",
    )
    session.flush()
    row = rated.row if rated.rescored else None
    return {
        "ratings": [{"doc_id": d, "rating": r} for d, r in sorted(rated.ratings.items())],
        "query_score": None if row is None else row.score,
        "run_id": None if rated.run is None else rated.run.id,
        "case_score": None if rated.run is None or not rated.rescored else rated.run.case_score,
    }


def annotate(
    *, session: Session, actor: Actor, case_id: int, text: str, run_id: int | None
) -> dict[str, Any]:
    """Add a note to the case's timeline, marked as the agent's."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    body = AnnotationCreate(text=f"Agent {actor.key_name}: {text}"[:2000], run_id=run_id)
    note = notes.create_annotation(session=session, case=case, user=actor.user(session), body=body)
    note.agent = actor.key_name
    session.flush()
    return notes.to_read(note).model_dump(mode="json")


def agent_run(
    *,
    session: Session,
    actor: Actor,
    case: Case,
    knobs: Mapping[str, float] | None = None,
    template: str | None = None,
) -> Run:
    """Queue a run of the case's current try (or a draft of it) marked as the agent's."""
    run = run_service.create_run(session=session, case=case, knobs=knobs, trigger=AGENT_TRIGGER)
    run.agent = actor.key_name
    run.query_template = template
    session.flush()
    return run


def start_run(*, session: Session, actor: Actor, case_id: int) -> int:
    """Queue a run of the case's current try as the agent's; return its id."""
    require(actor, "run")
    case = case_of(session, actor, case_id)
    return agent_run(session=session, actor=actor, case=case).id


def start_sweep(
    *, session: Session, actor: Actor, case_id: int, grid: Mapping[str, list[float]]
) -> tuple[int, int]:
    """Check and queue a sweep as the agent's; return (case id, sweep id) for starting it."""
    require(actor, "run")
    case = case_of(session, actor, case_id)
    sweep = sweep_service.create_sweep(session=session, case=case, body=SweepCreate(knobs=grid))
    sweep.agent = actor.key_name
    combos = ", ".join(f"{k}: {v}" for k, v in grid.items())
    note(session, case=case, actor=actor, text=f"started sweep {sweep.id} over {combos}")
    session.flush()
    return case.id, sweep.id


def sweep_runs_as_agent(*, session: Session, sweep_id: int, key_name: str) -> None:
    """Mark a sweep's runs (queued so far) as the agent's."""
    session.execute(
        update(Run)
        .where(Run.sweep_id == sweep_id)
        .values(trigger=AGENT_TRIGGER, agent=key_name)
        .execution_options(synchronize_session=False)
    )
    session.flush()


def sweep_summary(*, session: Session, sweep_id: int) -> dict[str, Any]:
    """Return a sweep's state for a tool's answer."""
    sweep = session.get(Sweep, sweep_id)
    if sweep is None:
        raise NotFound(f"No sweep {sweep_id}.")
    return {
        "id": sweep.id,
        "case_id": sweep.case_id,
        "status": sweep.status,
        "total": sweep.total,
        "grid": sweep.grid,
        "agent": sweep.agent,
    }


def mark_judge_run(*, session: Session, run_id: int, key_name: str) -> None:
    """Mark a judge run as the agent's."""
    session.execute(update(JudgeRun).where(JudgeRun.id == run_id).values(agent=key_name))
    session.flush()


# Proposed tries

"""An agent's proposed try: run a draft template and knobs without touching the case, compare
it with the current try on every metric (the held-out half of the queries apart), apply it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import access
from app.agents.flows import AGENT_TRIGGER, Actor, agent_run, case_of, note, require
from app.agents.heldout import HalfReport, half_report, held_out_ids
from app.agents.schemas import DraftRead, ProposalAll, ProposalRead
from app.cases import service as case_service
from app.cases.schemas import CaseUpdate
from app.compare import service as compare_service
from app.compare.schemas import RunComparison
from app.errors import Conflict, Invalid
from app.models import Case, Query, Run, RunQuery
from app.runs import service as run_service
from app.runs.metrics import weighted
from app.search.templates import extract_knobs
from app.sweeps import service as sweep_service
from app.sweeps.results import is_complete
from app.vocabulary import RunStatus

__all__ = ["Draft", "apply_try", "create_draft", "proposal_report", "runs_to_start"]


@dataclass(frozen=True)
class Draft:
    """The runs a proposal needs: the draft, and (when the current try has no finished run
    of its own) a run of the current try to compare it with."""

    case_id: int
    draft_run_id: int
    base_run_id: int
    base_is_new: bool


def create_draft(
    *,
    session: Session,
    actor: Actor,
    case_id: int,
    query_template: str | None,
    knobs: Mapping[str, float],
) -> Draft:
    """Check a draft template and knobs against the case, and queue its run (and a run of
    the current try when it has none): the case's settings are not changed."""
    require(actor, "run")
    case = case_of(session, actor, case_id)
    current = case_service.current_try(session=session, case=case)
    template = current.query_template if query_template is None else query_template
    known = extract_knobs(template)
    for name in knobs:
        if name not in known:
            listed = ", ".join(known) or "none"
            raise Invalid(
                ("knobs", name),
                f"The draft template has no knob {name!r} (its knobs: {listed}).",
            )
    endpoint = access.visible_endpoint(
        session=session, user=actor.user(session), endpoint_id=current.search_endpoint_id
    )
    merged = {**(current.knobs or {}), **{k: float(v) for k, v in knobs.items()}}
    full = case_service.check_search_settings(
        engine=endpoint.engine,
        template=template,
        field_spec=current.field_spec,
        options=case.options or {},
        knobs=merged,
    )
    base = run_service.latest_finished_run(session=session, case=case)
    base_is_new = base is None or base.try_number != case.current_try_number
    if base is None or base_is_new:
        base = agent_run(session=session, actor=actor, case=case)
    draft = agent_run(session=session, actor=actor, case=case, knobs=full, template=template)
    return Draft(
        case_id=case.id, draft_run_id=draft.id, base_run_id=base.id, base_is_new=base_is_new
    )


def runs_to_start(draft: Draft) -> list[int]:
    """Return the runs of a proposal that must be started."""
    return [draft.base_run_id, draft.draft_run_id] if draft.base_is_new else [draft.draft_run_id]


def proposal_report(
    *, session: Session, actor: Actor, case_id: int, base_run_id: int, run_id: int
) -> ProposalRead:
    """Compare a draft's run with the current try's on every metric, and report the
    held-out half of the queries apart from the half an agent tunes on."""
    require(actor, "read")
    case = case_of(session, actor, case_id)
    run = run_service.get_run(session=session, case=case, run_id=run_id)
    base = run_service.get_run(session=session, case=case, run_id=base_run_id)
    if run.status in run_service.ACTIVE or base.status in run_service.ACTIVE:
        return _running(case, run=run, base=base)
    comparison = compare_service.compare_runs(
        session=session, case=case, base_run=base, other_run=run
    )
    held, tuning = _halves(session, case, comparison, run_ids=(base.id, run.id))
    _note_proposal(
        session, case=case, actor=actor, run=run, base=base, comparison=comparison, held=held
    )
    session.flush()
    return _finished(case, run=run, base=base, comparison=comparison, halves=(held, tuning))


def _finished(
    case: Case,
    *,
    run: Run,
    base: Run,
    comparison: RunComparison,
    halves: tuple[HalfReport, HalfReport],
) -> ProposalRead:
    held, tuning = halves
    return ProposalRead(
        status="finished",
        case_id=case.id,
        run_id=run.id,
        base_run_id=base.id,
        try_number=base.try_number,
        draft=DraftRead(query_template=run.query_template, knobs=dict(run.knobs or {})),
        all=_all_queries(comparison),
        held_out=held,
        tuning=tuning,
        holds_on_held_out=_overall(held, tuning),
        complete=is_complete(run),
    )


def _running(case: Case, *, run: Run, base: Run) -> ProposalRead:
    return ProposalRead(
        status="running",
        case_id=case.id,
        run_id=run.id,
        base_run_id=base.id,
        message="The runs have not ended yet: call compare_runs with base_run_id "
        f"{base.id} and other_run_id {run.id} once get_run says they finished.",
    )


def _halves(
    session: Session, case: Case, comparison: RunComparison, *, run_ids: tuple[int, int]
) -> tuple[HalfReport, HalfReport]:
    """Return the held-out half's report and the tuning half's, on every metric."""
    query_ids = [q.query_id for q in comparison.queries]
    held = held_out_ids(case.id, query_ids)
    tuning = set(query_ids) - held
    metrics = [(m.scorer_id, m.name) for m in comparison.metrics] or [
        (comparison.scorer_id, comparison.scorer_name)
    ]
    scores = (_metric_scores(session, run_ids[0]), _metric_scores(session, run_ids[1]))
    weights = _query_weights(session, case) if weighted(case) else None
    half = partial(
        half_report, queries=comparison.queries, metrics=metrics, scores=scores, weights=weights
    )
    return half(ids=held), half(ids=tuning)


def _query_weights(session: Session, case: Case) -> dict[int, float]:
    return {q.id: q.weight for q in session.scalars(select(Query).where(Query.case_id == case.id))}


def _note_proposal(
    session: Session,
    *,
    case: Case,
    actor: Actor,
    run: Run,
    base: Run,
    comparison: RunComparison,
    held: HalfReport,
) -> None:
    note(
        session,
        case=case,
        actor=actor,
        text=f"proposed a try (draft run {run.id} against run {base.id}): "
        f"{comparison.verdict}, {_signed(comparison.headline_delta)} on all queries, "
        f"{_signed(held.mean_delta)} on the held-out half",
        run=run,
    )


def _all_queries(comparison: RunComparison) -> ProposalAll:
    return ProposalAll(
        verdict=comparison.verdict,
        summary=comparison.summary,
        headline_delta=comparison.headline_delta,
        decision_p=comparison.decision_p,
        base_score=comparison.base.case_score,
        other_score=comparison.other.case_score,
        counts=comparison.counts,
        metrics=comparison.metrics,
    )


def _overall(held: HalfReport, tuning: HalfReport) -> str:
    """Say whether a gain on the tuning half holds on the held-out half."""
    if tuning.mean_delta is None or held.mean_delta is None:
        return "unknown"
    if tuning.mean_delta > 0 and held.mean_delta <= 0:
        return "no: the gain on the tuning half does not hold on the held-out half"
    if tuning.mean_delta > 0 and held.mean_delta > 0:
        return "yes: the held-out half improves too"
    return "no gain to hold"


def _signed(value: float | None) -> str:
    return "no change measured" if value is None else f"{value:+.2f} points"


def _metric_scores(session: Session, run_id: int) -> dict[int, dict[str, float | None]]:
    rows = session.execute(
        select(RunQuery.query_id, RunQuery.metric_scores).where(RunQuery.run_id == run_id)
    )
    return {qid: dict(scores or {}) for qid, scores in rows if qid is not None}


def apply_try(
    *, session: Session, actor: Actor, case_id: int, run_id: int, confirm_partial: bool
) -> dict[str, Any]:
    """Make a draft's template and knobs the case's new try; its run becomes the case's
    latest (a copy, no engine call), marked as the agent's."""
    require(actor, "write")
    case = case_of(session, actor, case_id)
    run = run_service.get_run(session=session, case=case, run_id=run_id)
    if run.query_template is None:
        raise Conflict(
            f"Run {run.id} is not a proposed try: apply_try applies a run made by propose_try."
        )
    if run.status != RunStatus.FINISHED:
        raise Conflict(f"Run {run.id} is {run.status}: only a finished run can be applied.")
    if not is_complete(run) and not confirm_partial:
        raise Conflict(
            f"Run {run.id} is partial ({run.scored} of {run.total} queries scored, "
            f"{run.errors} errors): send confirm_partial true to apply it anyway."
        )
    user = actor.user(session)
    before = case.current_try_number
    case = case_service.apply_settings(
        session=session,
        user=user,
        case=case,
        body=CaseUpdate(query_template=run.query_template, knobs=dict(run.knobs or {})),
    )
    adopted = sweep_service.adopt_run(session=session, case=case, run=run)
    adopted.trigger = AGENT_TRIGGER
    adopted.agent = actor.key_name
    changed = case.current_try_number != before
    note(
        session,
        case=case,
        actor=actor,
        text=f"applied the proposed try of run {run.id} as try {case.current_try_number}"
        if changed
        else f"applied run {run.id}, whose settings are the current try's",
        run=adopted,
    )
    session.flush()
    return {
        "case": case_service.to_read(session=session, case=case).model_dump(mode="json"),
        "try_number": case.current_try_number,
        "new_try": changed,
        "run_id": adopted.id,
        "case_score": adopted.case_score,
    }

"""`relevo run`: run a case and print its scores, for CI pipelines."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from app.cli import ci
from app.cli.database import session_factory
from app.config import Settings
from app.db import session_scope
from app.models import Case
from app.runs import service as run_service
from app.runs.manager import RunManager
from app.runs.schemas import RunDetail
from app.vocabulary import RunStatus

__all__ = ["register"]


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    factory = session_factory(settings)
    with session_scope(factory) as session:
        case = session.get(Case, args.case_id)
        if case is None or (args.as_user and case.owner.email != args.as_user):
            print(f"No case with id {args.case_id}.", file=sys.stderr)
            return 2
        try:
            ci.check_gate(session=session, case=case, bars=args.fail_under or [], tag=args.tag)
        except ci.GateError as exc:
            print(str(exc), file=sys.stderr)
            return 2
        run = run_service.create_run(session=session, case=case)
        run_id = run.id

    async def go() -> None:
        manager = RunManager(session_factory=factory)
        try:
            await manager.start(run_id)
        finally:
            await manager.aclose()

    asyncio.run(go())
    with session_scope(factory) as session:
        case = session.get(Case, args.case_id)
        assert case is not None
        run = run_service.get_run(session=session, case=case, run_id=run_id)
        detail = run_service.detail(session=session, run=run)
        # Every metric, over the queries with --tag when given (the case score is then the
        # primary metric's over those queries).
        metrics = ci.tagged_metrics(session=session, run=run, tag=args.tag)
        case_score = metrics[0].case_score if args.tag and metrics else detail.case_score
        if args.json:
            print(
                json.dumps(
                    ci.report(session=session, detail=detail, metrics=metrics, tag=args.tag),
                    indent=2,
                )
            )
    if not args.json:
        _print_table(detail)
        if args.tag:
            print(f"\nover the queries tagged {args.tag!r} (the bars apply to these):")
        for metric in metrics:
            print(f"{metric.name:<12} {_fmt(metric.case_score):>7}  ({metric.scored} scored)")
    if detail.status != RunStatus.FINISHED:
        print(f"Run {detail.id} {detail.status}: {detail.error}", file=sys.stderr)
        return 1
    try:
        failed = ci.under_bars(metrics, args.fail_under or [], case_score=case_score, tag=args.tag)
    except ci.UnknownMetric as exc:
        print(str(exc), file=sys.stderr)
        return 2
    for sentence in failed:
        print(sentence, file=sys.stderr)
    return 1 if failed else 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_table(detail: RunDetail) -> None:
    width = max([len(q.text) for q in detail.queries] + [5])
    print(f"{'query':<{width}}  {'score':>7}  {'status':<8}  found  note")
    for q in detail.queries:
        note = q.error or q.reason or ""
        found = "-" if q.num_found is None else str(q.num_found)
        print(f"{q.text:<{width}}  {_fmt(q.score):>7}  {q.status:<8}  {found:>5}  {note}")
    print(
        f"\ncase score {_fmt(detail.case_score)}  (run {detail.id}: {detail.scored} scored, "
        f"{detail.unscored} unscored, {detail.errors} errors)"
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo run` to the relevo parser."""
    run = sub.add_parser("run", help="run a case and print its scores (for CI pipelines)")
    run.add_argument("case_id", type=int)
    run.add_argument(
        "--fail-under",
        type=ci.parse_bar,
        action="append",
        metavar="[NAME=]VALUE",
        help="exit 1 when the case score (or the metric NAME, e.g. ndcg@10=62) is below "
        "VALUE; repeatable, every metric under its bar is named",
    )
    run.add_argument("--tag", default=None, help="score only the queries with this tag")
    run.add_argument("--json", action="store_true", help="print the run as JSON")
    run.add_argument("--as-user", default=None, help="only run a case this email owns")
    run.set_defaults(func=cmd_run)

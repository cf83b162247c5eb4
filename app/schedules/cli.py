"""`relevo schedules|alerts|webhooks ...`: the same service functions as the API, for operators."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeAlias

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.cases.schemas import ScheduleBody
from app.config import Settings
from app.db import session_scope
from app.errors import NotFound
from app.models import Case, CaseSchedule, User
from app.schedules import alerts, service, webhooks
from app.schedules.schemas import AlertCreate, WebhookCreate

__all__ = ["register"]

Factory = Callable[[Settings], sessionmaker[Session]]
# A string: argparse's subparsers action is generic only to type checkers.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Work = Callable[[argparse.Namespace, Session], None]


def _case(session: Session, case_id: int) -> Case:
    case = session.get(Case, case_id)
    if case is None:
        raise NotFound(f"No case with id {case_id}.")
    return case


def _user(session: Session, email: str) -> User:
    user = user_service.get_by_email(session=session, email=email)
    if user is None:
        raise NotFound(f"No user with the email {email}.")
    return user


def _schedules_set(args: argparse.Namespace, session: Session) -> None:
    case = _case(session, args.case_id)
    body = ScheduleBody(cron=args.cron, try_number=args.try_number)
    schedule = service.set_schedule(session=session, case=case, body=body)
    when = service.to_read(schedule).next_run_at
    print(f"Case {case.id} runs at '{schedule.cron}' (UTC); next {when:%Y-%m-%d %H:%M} UTC.")


def _schedules_clear(args: argparse.Namespace, session: Session) -> None:
    service.delete_schedule(session=session, case=_case(session, args.case_id))
    print(f"Case {args.case_id} no longer runs on a schedule.")


def _schedules_list(_args: argparse.Namespace, session: Session) -> None:
    for schedule in session.scalars(select(CaseSchedule).order_by(CaseSchedule.next_run_at)):
        read = service.to_read(schedule)
        pinned = "current" if read.try_number is None else f"try {read.try_number}"
        print(f"{read.case_id}\t{read.cron}\t{pinned}\t{read.next_run_at:%Y-%m-%d %H:%M} UTC")


def _schedules_fire(_args: argparse.Namespace, session: Session) -> None:
    fired = service.fire_due(session=session, now=datetime.now(UTC))
    for one in fired:
        print(f"case {one.case_id}: due {one.due_at:%Y-%m-%d %H:%M} UTC, run {one.run_id} queued")
    if not fired:
        print("Nothing is due.")


def _alerts_add(args: argparse.Namespace, session: Session) -> None:
    case = _case(session, args.case_id)
    body = AlertCreate(
        kind=args.kind,
        points=args.points,
        baseline_run_id=args.baseline_run_id,
        alpha=args.alpha,
        threshold=args.threshold,
        error_share=args.error_share,
        webhook_ids=args.webhook or [],
        email=args.email or [],
    )
    alert = alerts.create_alert(session=session, case=case, user=case.owner, body=body)
    print(f"Alert {alert.id} ({alert.kind}) added to case {case.id}.")
    for note in alerts.notes(alert, email_enabled=True):
        print(f"Note: {note}")


def _alerts_list(args: argparse.Namespace, session: Session) -> None:
    for alert in alerts.list_alerts(session=session, case=_case(session, args.case_id)):
        print(alerts.to_read(alert).model_dump_json())


def _alerts_remove(args: argparse.Namespace, session: Session) -> None:
    case = _case(session, args.case_id)
    alert = alerts.get_alert(session=session, case=case, alert_id=args.alert_id)
    alerts.delete_alert(session=session, alert=alert)
    print(f"Alert {args.alert_id} removed.")


def _alerts_events(args: argparse.Namespace, session: Session) -> None:
    for event in alerts.list_events(session=session, case=_case(session, args.case_id)):
        print(json.dumps(event.model_dump(mode="json")))


def _webhooks_add(args: argparse.Namespace, session: Session) -> None:
    user = _user(session, args.email)
    secret = sys.stdin.readline().rstrip("\r\n") if args.secret_stdin else None
    body = WebhookCreate(name=args.name, url=args.url, secret=secret or None)
    webhook = webhooks.create_webhook(session=session, user=user, body=body)
    print(f"Webhook {webhook.id} ({webhook.name}) created.")


def _webhooks_list(args: argparse.Namespace, session: Session) -> None:
    for webhook in webhooks.list_webhooks(session=session, user=_user(session, args.email)):
        print(webhooks.to_read(webhook).model_dump_json())


def _webhooks_remove(args: argparse.Namespace, session: Session) -> None:
    user = _user(session, args.email)
    webhook = webhooks.visible_webhook(session=session, user=user, webhook_id=args.webhook_id)
    webhooks.delete_webhook(session=session, user=user, webhook=webhook)
    print(f"Webhook {args.webhook_id} removed.")


def _command(factory: Factory, work: Work) -> Callable[[argparse.Namespace, Settings], int]:
    def run(args: argparse.Namespace, settings: Settings) -> int:
        with session_scope(factory(settings)) as session:
            try:
                work(args, session)
            except ValidationError as exc:
                session.rollback()
                problems = "; ".join(str(e["msg"]) for e in exc.errors())
                print(f"error: {problems}", file=sys.stderr)
                return 2
        return 0

    return run


def register(sub: Subparsers, factory: Factory) -> None:
    """Add the schedules, alerts and webhooks commands to the relevo parser."""
    _add_schedules(sub, factory)
    _add_alerts(sub, factory)
    _add_webhooks(sub, factory)


def _add_schedules(sub: Subparsers, factory: Factory) -> None:
    """Add `relevo schedules set|clear|list|fire`."""
    schedules = sub.add_parser("schedules", help="run cases on a schedule").add_subparsers(
        dest="schedules", required=True
    )
    _add_schedules_set(schedules, factory)
    _add_schedules_clear(schedules, factory)
    schedules.add_parser("list", help="every schedule, next due first").set_defaults(
        func=_command(factory, _schedules_list)
    )
    schedules.add_parser("fire", help="queue the runs due now (once per due time)").set_defaults(
        func=_command(factory, _schedules_fire)
    )


def _add_schedules_set(schedules: Subparsers, factory: Factory) -> None:
    """Add `relevo schedules set CASE_ID CRON [--try N]`."""
    put = schedules.add_parser("set", help="run a case on a cron schedule (UTC) or a preset")
    put.add_argument("case_id", type=int)
    put.add_argument("cron", help="'0 3 * * *', @hourly, @daily or @weekly")
    put.add_argument("--try", dest="try_number", type=int, default=None, help="pin a try")
    put.set_defaults(func=_command(factory, _schedules_set))


def _add_schedules_clear(schedules: Subparsers, factory: Factory) -> None:
    """Add `relevo schedules clear CASE_ID`."""
    clear = schedules.add_parser("clear", help="stop a case's schedule")
    clear.add_argument("case_id", type=int)
    clear.set_defaults(func=_command(factory, _schedules_clear))


def _add_alerts(sub: Subparsers, factory: Factory) -> None:
    """Add `relevo alerts add|list|events|remove`."""
    rules = sub.add_parser("alerts", help="alert rules on cases").add_subparsers(
        dest="alerts", required=True
    )
    _add_alerts_add(rules, factory)
    _add_case_listing(rules, factory, "list", _alerts_list, "a case's alert rules, as JSON lines")
    _add_case_listing(
        rules,
        factory,
        "events",
        _alerts_events,
        "a case's triggered alerts and deliveries, as JSON lines",
    )
    _add_alerts_remove(rules, factory)


def _add_alerts_add(rules: Subparsers, factory: Factory) -> None:
    """Add `relevo alerts add CASE_ID --kind KIND ...`."""
    add = rules.add_parser("add", help="add an alert rule to a case (as its owner)")
    add.add_argument("case_id", type=int)
    add.add_argument(
        "--kind",
        required=True,
        choices=["drop", "drop_from_baseline", "significant_drop", "below", "run_failed"],
    )
    add.add_argument("--points", type=float, default=None)
    add.add_argument("--baseline-run-id", type=int, default=None)
    add.add_argument("--alpha", type=float, default=0.05)
    add.add_argument("--threshold", type=float, default=None)
    add.add_argument("--error-share", type=float, default=0.2)
    add.add_argument("--webhook", type=int, action="append", help="a webhook id (repeatable)")
    add.add_argument("--email", action="append", help="an e-mail address (repeatable)")
    add.set_defaults(func=_command(factory, _alerts_add))


def _add_case_listing(
    rules: Subparsers, factory: Factory, name: str, work: Work, help_text: str
) -> None:
    """Add `relevo alerts NAME CASE_ID`, a listing of one case's."""
    one = rules.add_parser(name, help=help_text)
    one.add_argument("case_id", type=int)
    one.set_defaults(func=_command(factory, work))


def _add_alerts_remove(rules: Subparsers, factory: Factory) -> None:
    """Add `relevo alerts remove CASE_ID ALERT_ID`."""
    remove = rules.add_parser("remove", help="remove an alert rule")
    remove.add_argument("case_id", type=int)
    remove.add_argument("alert_id", type=int)
    remove.set_defaults(func=_command(factory, _alerts_remove))


def _add_webhooks(sub: Subparsers, factory: Factory) -> None:
    """Add `relevo webhooks add|list|remove`."""
    hooks = sub.add_parser("webhooks", help="where alerts are sent").add_subparsers(
        dest="webhooks", required=True
    )
    _add_webhooks_add(hooks, factory)
    _add_webhooks_list(hooks, factory)
    _add_webhooks_remove(hooks, factory)


def _add_webhooks_add(hooks: Subparsers, factory: Factory) -> None:
    """Add `relevo webhooks add EMAIL NAME URL [--secret-stdin]`."""
    new = hooks.add_parser("add", help="create a webhook for a user")
    new.add_argument("email")
    new.add_argument("name")
    new.add_argument("url")
    new.add_argument("--secret-stdin", action="store_true", help="read the signing secret")
    new.set_defaults(func=_command(factory, _webhooks_add))


def _add_webhooks_list(hooks: Subparsers, factory: Factory) -> None:
    """Add `relevo webhooks list EMAIL`."""
    listing = hooks.add_parser("list", help="a user's webhooks, as JSON lines")
    listing.add_argument("email")
    listing.set_defaults(func=_command(factory, _webhooks_list))


def _add_webhooks_remove(hooks: Subparsers, factory: Factory) -> None:
    """Add `relevo webhooks remove EMAIL WEBHOOK_ID`."""
    drop = hooks.add_parser("remove", help="delete a webhook")
    drop.add_argument("email")
    drop.add_argument("webhook_id", type=int)
    drop.set_defaults(func=_command(factory, _webhooks_remove))

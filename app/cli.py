"""The `relevo` command: serve, database, users, API keys, runs for CI pipelines."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import replace

from cryptography.fernet import Fernet
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import admin as admin_service
from app.accounts import service as user_service
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.errors import RelevoError
from app.models import Case
from app.runs import ci
from app.runs import service as run_service
from app.runs.manager import RunManager
from app.runs.schemas import RunDetail
from app.runtime import serve_until_stopped, tune_gc
from app.schedules import cli as schedules_cli
from app.scorers import service as scorer_service
from app.scoring.sandbox import JsPool, install_pool
from app.secret_box import KeyConfigError, Keyring, install_keyring, reseal_all
from app.supervisor import WorkerSupervisor, exit_with_parent
from app.sweeps import service as sweep_service
from app.vocabulary import RunStatus

__all__ = ["main"]


def _factory(settings: Settings) -> sessionmaker[Session]:
    engine = make_engine(settings.resolved_database_url)
    migrate(engine)
    factory = make_session_factory(engine)
    with session_scope(factory) as session:
        scorer_service.seed_presets(session=session)
    return factory


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from app.main import create_app

    workers = 1 if args.workers is None else args.workers
    if workers < 0:
        print("--workers must be 0 or more.", file=sys.stderr)
        return 2
    if not settings.uses_queue and workers != 1:
        print(
            "With SQLite, runs execute in the web process: --workers applies to PostgreSQL "
            "(DATABASE_URL=postgresql://...).",
            file=sys.stderr,
        )
        return 2
    supervisor = _worker_supervisor(workers, args.concurrency) if settings.uses_queue else None

    def serve() -> None:
        if supervisor is not None:
            supervisor.start()
        # The app migrates the database and seeds the presets when it starts.
        uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")

    serve_until_stopped(serve, cleanup=supervisor.stop if supervisor is not None else _nothing)
    return 0


def _nothing() -> None:
    return None


def _worker_supervisor(count: int, concurrency: int) -> WorkerSupervisor:
    """Return the supervisor of `serve`'s workers; it logs to the server's stderr."""
    logger = logging.getLogger(WorkerSupervisor.__module__)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    command = [
        sys.executable,
        "-m",
        "app.cli",
        "worker",
        "--concurrency",
        str(concurrency),
        "--parent-pid",
        str(os.getpid()),
    ]
    return WorkerSupervisor(command, count)


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from app.runs.worker import GRACEFUL_STOP_S, run_worker

    if not settings.uses_queue:
        print(
            "relevo worker needs the PostgreSQL job queue: set DATABASE_URL=postgresql://... "
            "(with SQLite, runs execute in the web process).",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per engine request
    if args.parent_pid is not None:
        exit_with_parent(args.parent_pid, grace_s=GRACEFUL_STOP_S + 10)
    after_reap = [sweep_service.close_finished_sweeps]  # the sweeps whose runs have all ended
    asyncio.run(
        run_worker(settings, concurrency=args.concurrency, name=args.name, after_reap=after_reap)
    )
    return 0


def cmd_db_upgrade(_args: argparse.Namespace, settings: Settings) -> int:
    _factory(settings)
    print(f"Database at {settings.resolved_database_url.split('@')[-1]} is up to date.")
    return 0


def cmd_secrets_rotate(_args: argparse.Namespace, settings: Settings) -> int:
    """Re-seal every stored secret with the first key of RELEVO_ENCRYPTION_KEYS."""
    engine = make_engine(settings.resolved_database_url)
    try:
        migrate(engine)  # plaintext left from before sealing is sealed by the migration
        with engine.begin() as connection:
            report = reseal_all(connection)
    finally:
        engine.dispose()
    print(f"Re-sealed {report.resealed} stored secrets with the newest encryption key.")
    if report.unreadable:
        print(
            f"{len(report.unreadable)} secrets open with none of the keys and were left as they "
            "are (keep the old key until they are entered again): " + ", ".join(report.unreadable),
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_secrets_check(_args: argparse.Namespace, settings: Settings) -> int:
    """Say whether the configured keys open every stored secret; change nothing."""
    engine = make_engine(settings.resolved_database_url)
    try:
        with engine.connect() as connection:
            report = reseal_all(connection, write=False)
            connection.rollback()
    finally:
        engine.dispose()
    if report.unreadable:
        print(
            f"{len(report.unreadable)} stored secrets open with none of the configured keys: "
            + ", ".join(report.unreadable),
            file=sys.stderr,
        )
        return 1
    print("Every stored secret opens with the configured keys.")
    return 0


def cmd_secrets_new_key(_args: argparse.Namespace, _settings: Settings) -> int:
    """Print a new encryption key, for the front of RELEVO_ENCRYPTION_KEYS."""
    print(Fernet.generate_key().decode("ascii"))
    return 0


def cmd_users_create(args: argparse.Namespace, settings: Settings) -> int:
    if not args.password_stdin:
        print("Give the password on standard input with --password-stdin.", file=sys.stderr)
        return 2
    password = sys.stdin.readline().rstrip("\r\n")
    with session_scope(_factory(settings)) as session:
        user = user_service.create_user(
            session=session, email=args.email, password=password, is_admin=args.admin
        )
        print(f"Created user {user.email} (id {user.id}).")
    return 0


def cmd_users_list(_args: argparse.Namespace, settings: Settings) -> int:
    with session_scope(_factory(settings)) as session:
        for user in admin_service.list_users(session=session):
            flags = [
                word
                for word, on in (("admin", user.is_admin), ("disabled", user.is_disabled))
                if on
            ]
            print(f"{user.id}\t{user.email}\t{','.join(flags) or '-'}")
    return 0


def cmd_users_disable(args: argparse.Namespace, settings: Settings) -> int:
    with session_scope(_factory(settings)) as session:
        user = admin_service.find_user(session=session, email=args.email)
        admin_service.set_disabled(session=session, admin=None, user=user, disabled=args.disable)
        state = "disabled: its sessions and API keys stop working" if args.disable else "enabled"
        print(f"User {user.email} is {state}.")
    return 0


def cmd_users_reset_password(args: argparse.Namespace, settings: Settings) -> int:
    if not args.password_stdin:
        print("Give the new password on standard input with --password-stdin.", file=sys.stderr)
        return 2
    password = sys.stdin.readline().rstrip("\r\n")
    with session_scope(_factory(settings)) as session:
        user = admin_service.find_user(session=session, email=args.email)
        admin_service.reset_password(session=session, user=user, password=password)
        print(f"New password set for {user.email}; their browser sessions have ended.")
    return 0


def cmd_api_keys_create(args: argparse.Namespace, settings: Settings) -> int:
    with session_scope(_factory(settings)) as session:
        user = user_service.get_by_email(session=session, email=args.email)
        if user is None:
            print(f"No user with the email {args.email}.", file=sys.stderr)
            return 1
        _key, clear = user_service.create_api_key(
            session=session, user=user, name=args.name, can_manage_keys=True
        )
    print("New API key (shown only once):", file=sys.stderr)
    print(clear)
    return 0


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    factory = _factory(settings)
    with session_scope(factory) as session:
        case = session.get(Case, args.case_id)
        if case is None or (args.as_user and case.owner.email != args.as_user):
            print(f"No case with id {args.case_id}.", file=sys.stderr)
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
        for metric in metrics:
            print(f"{metric.name:<12} {_fmt(metric.case_score):>7}  ({metric.scored} scored)")
    if detail.status != RunStatus.FINISHED:
        print(f"Run {detail.id} {detail.status}: {detail.error}", file=sys.stderr)
        return 1
    try:
        failed = ci.under_bars(metrics, args.fail_under or [], case_score=case_score)
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


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the relevo command."""
    parser = argparse.ArgumentParser(prog="relevo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="migrate the database and serve the app")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes to start beside the app with PostgreSQL (default 1; 0 serves only)",
    )
    serve.add_argument("--concurrency", type=int, default=8, help="chunks each worker runs at once")
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="execute queued runs (PostgreSQL job queue)")
    worker.add_argument("--concurrency", type=int, default=8, help="chunks executed at once")
    worker.add_argument("--name", default=None, help="the worker's name in the queue")
    worker.add_argument(
        "--parent-pid",
        type=int,
        default=None,
        help="stop when this process, the worker's parent, ends (`relevo serve` sets it)",
    )
    worker.set_defaults(func=cmd_worker)

    db = sub.add_parser("db", help="database commands").add_subparsers(dest="db", required=True)
    db.add_parser("upgrade", help="apply migrations").set_defaults(func=cmd_db_upgrade)

    users = sub.add_parser("users", help="accounts").add_subparsers(dest="users", required=True)
    create = users.add_parser("create", help="create a user")
    create.add_argument("email")
    create.add_argument("--password-stdin", action="store_true", help="read the password")
    create.add_argument("--admin", action="store_true")
    create.set_defaults(func=cmd_users_create)
    users.add_parser("list", help="list every account").set_defaults(func=cmd_users_list)
    for name, disable in (("disable", True), ("enable", False)):
        toggle = users.add_parser(name, help=f"{name} an account (sessions and keys)")
        toggle.add_argument("email")
        toggle.set_defaults(func=cmd_users_disable, disable=disable)
    reset = users.add_parser("reset-password", help="set a new password for an account")
    reset.add_argument("email")
    reset.add_argument("--password-stdin", action="store_true", help="read the password")
    reset.set_defaults(func=cmd_users_reset_password)

    secrets = sub.add_parser("secrets", help="secrets encrypted at rest").add_subparsers(
        dest="secrets", required=True
    )
    secrets.add_parser(
        "rotate", help="re-seal every stored secret with the first RELEVO_ENCRYPTION_KEYS key"
    ).set_defaults(func=cmd_secrets_rotate)
    secrets.add_parser(
        "check", help="exit 1, naming them, if stored secrets open with none of the keys"
    ).set_defaults(func=cmd_secrets_check)
    secrets.add_parser("new-key", help="print a new encryption key").set_defaults(
        func=cmd_secrets_new_key
    )

    keys = sub.add_parser("api-keys", help="API keys").add_subparsers(dest="keys", required=True)
    key = keys.add_parser("create", help="create a key; printed once, as the last line")
    key.add_argument("email")
    key.add_argument("--name", default="cli")
    key.set_defaults(func=cmd_api_keys_create)

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

    schedules_cli.register(sub, _factory)

    demo = sub.add_parser("demo", help="start the embedded engine, the demo case and the app")
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument(
        "--engine-port",
        type=int,
        default=None,
        help="port of the embedded search engine (default 9250, kept from one start to the next)",
    )
    demo.set_defaults(func=cmd_demo)
    return parser


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from app.demo.run import DEMO_ENGINE_PORT, serve_demo

    settings = replace(settings, run_queue="inprocess")  # the demo is one process

    engine_port = DEMO_ENGINE_PORT if args.engine_port is None else args.engine_port
    return serve_demo(settings=settings, host=args.host, port=args.port, engine_port=engine_port)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the relevo command and return its exit code."""
    args = build_parser().parse_args(argv)
    tune_gc()
    settings = Settings.from_env()
    try:
        if any(key.strip() for key in settings.encryption_keys):  # checked before anything runs
            install_keyring(Keyring.load(keys=settings.encryption_keys, data_dir=settings.data_dir))
        else:
            # The data directory's key is read (or made) when a secret is first sealed or
            # unsealed, so a command that stops early (a demo whose port is taken) leaves no
            # data directory behind.
            install_keyring(None)
    except KeyConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # The command's JavaScript workers (the app and `relevo worker` install their own).
    with JsPool() as js_pool:
        previous = install_pool(js_pool)
        try:
            code: int = args.func(args, settings)
        except RelevoError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        finally:
            install_pool(previous)
    return code


if __name__ == "__main__":
    sys.exit(main())

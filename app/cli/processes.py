"""`relevo serve`, `relevo worker` and `relevo demo`: the commands that run until stopped."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from dataclasses import replace

from app.cli.encryption import check_stored_secrets
from app.config import Settings, listen_url
from app.runtime import serve_until_stopped
from app.schedules.delivery import config_from as delivery_config_from
from app.schedules.delivery import install_config as install_delivery
from app.supervisor import WorkerSupervisor, exit_with_parent

__all__ = ["register_demo", "register_serve", "register_worker"]


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
    check_stored_secrets(settings)  # before any process starts (the app checks again)
    # Without RELEVO_BASE_URL, alert links point at the address served here (and so do
    # those of the workers started here, which end the runs).
    settings = replace(settings, listen_url=listen_url(args.host, args.port))
    supervisor = (
        _worker_supervisor(workers, args.concurrency, settings.listen_url)
        if settings.uses_queue
        else None
    )

    def serve() -> None:
        if supervisor is not None:
            supervisor.start()
        # The app migrates the database and seeds the presets when it starts.
        uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")

    serve_until_stopped(serve, cleanup=supervisor.stop if supervisor is not None else _nothing)
    return 0


def _nothing() -> None:
    return None


def _worker_supervisor(count: int, concurrency: int, link_base: str | None) -> WorkerSupervisor:
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
        *(["--listen-url", link_base] if link_base else []),
    ]
    return WorkerSupervisor(command, count)


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from app.cli.worker import GRACEFUL_STOP_S, run_worker

    if not settings.uses_queue:
        print(
            "relevo worker needs the PostgreSQL job queue: set DATABASE_URL=postgresql://... "
            "(with SQLite, runs execute in the web process).",
            file=sys.stderr,
        )
        return 2
    check_stored_secrets(settings)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per engine request
    if args.parent_pid is not None:
        exit_with_parent(args.parent_pid, grace_s=GRACEFUL_STOP_S + 10)
    if args.listen_url:
        settings = replace(settings, listen_url=args.listen_url)
    # Alerts evaluated when this worker ends a run link to the server and may e-mail;
    # the queue's minute job fires the schedules (the domains' jobs: app/registration.py).
    install_delivery(delivery_config_from(settings))
    asyncio.run(run_worker(settings, concurrency=args.concurrency, name=args.name))
    return 0


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from app.demo.run import DEMO_ENGINE_PORT, serve_demo

    # The demo is one process; its alert links point at it unless RELEVO_BASE_URL says else.
    settings = replace(settings, run_queue="inprocess", listen_url=listen_url(args.host, args.port))
    check_stored_secrets(settings)

    engine_port = DEMO_ENGINE_PORT if args.engine_port is None else args.engine_port
    return serve_demo(settings=settings, host=args.host, port=args.port, engine_port=engine_port)


def register_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo serve` to the relevo parser."""
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


def register_worker(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo worker` to the relevo parser."""
    worker = sub.add_parser("worker", help="execute queued runs (PostgreSQL job queue)")
    worker.add_argument("--concurrency", type=int, default=8, help="chunks executed at once")
    worker.add_argument("--name", default=None, help="the worker's name in the queue")
    worker.add_argument(
        "--parent-pid",
        type=int,
        default=None,
        help="stop when this process, the worker's parent, ends (`relevo serve` sets it)",
    )
    worker.add_argument(
        "--listen-url",
        default=None,
        help="where alert links point without RELEVO_BASE_URL (`relevo serve` sets it)",
    )
    worker.set_defaults(func=cmd_worker)


def register_demo(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo demo` to the relevo parser."""
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

"""`relevo demo`: the embedded engine, the demo case and the app, stopped together by Ctrl-C."""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.demo.corpus import index_movies, start_osmem
from app.demo.setup import DEMO_EMAIL, DEMO_PASSWORD, DemoInfo, prepare_demo
from app.outbound.policy import install_policy, policy_of
from app.runtime import serve_until_stopped
from app.scorers import service as scorer_service

if TYPE_CHECKING:
    from osmem_server import OsmemServer

# A fixed port, so that the demo endpoint's URL stays the same from one start to the next.
DEMO_ENGINE_PORT = 9250
ENGINE_HOST = "127.0.0.1"


def taken_ports(addresses: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Return the (host, port) pairs that cannot be listened on because something already does."""
    taken = []
    for host, port in addresses:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            # As uvicorn does: a port left in TIME_WAIT by a stopped demo is free to reuse.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                taken.append((host, port))
    return taken


def serve_demo(
    *, settings: Settings, host: str, port: int, engine_port: int = DEMO_ENGINE_PORT
) -> int:
    """Start osmem with the movies, prepare the demo, serve the UI; return the exit code.

    When the app's or the engine's port is taken (another demo is running), say so and
    change nothing: no engine, no database writes.
    """
    if _say_if_taken(taken_ports([(host, port), (ENGINE_HOST, engine_port)])):
        return 1
    settings = _trusting_own_engine(settings, engine_port)
    install_policy(policy_of(settings))  # preparing the demo runs the case before the app
    print(f"Starting the embedded search engine (osmem-server) on port {engine_port}…", flush=True)
    server = start_osmem(addr=f"{ENGINE_HOST}:{engine_port}")
    # The engine stops whatever ends the demo: Ctrl-C, SIGTERM, or an error while preparing.
    serve_until_stopped(
        lambda: _prepare_and_serve(settings, server.url, host=host, port=port),
        cleanup=lambda: _stop_engine(server),
    )
    return 0


def _say_if_taken(taken: list[tuple[str, int]]) -> bool:
    """Return whether any port is taken, after telling the user which and what to do."""
    if not taken:
        return False
    where = ", ".join(f"{h}:{p}" for h, p in taken)
    print(
        f"Port taken: {where}. Is another `relevo demo` running? Stop it, or choose "
        "other ports with --port and --engine-port. Nothing was changed.",
        file=sys.stderr,
    )
    return True


def _trusting_own_engine(settings: Settings, engine_port: int) -> Settings:
    """Return the settings with the demo's own engine among the trusted engine hosts."""
    # The demo calls its own engine on loopback, which the outbound policy refuses unless
    # allowed: this host and port are, and only for this process; nothing else changes.
    own = f"{ENGINE_HOST}:{engine_port}"
    return replace(settings, trusted_engine_hosts=(*settings.trusted_engine_hosts, own))


def _stop_engine(server: OsmemServer) -> None:
    """Stop the embedded engine and say so."""
    server.close()
    print("Stopped the server and the engine.", file=sys.stderr)


def _prepare_and_serve(settings: Settings, engine_url: str, *, host: str, port: int) -> None:
    """Index the movies, prepare the demo case, then serve the app until stopped."""
    count = index_movies(engine_url, "movies")
    print(f"Indexed {count} movies at {engine_url}/movies", flush=True)
    info = _prepare_case(settings, engine_url)
    word = "Created" if info.created else "Reusing"
    print(f"{word} the demo case (id {info.case_id}).", flush=True)
    _print_welcome(host, port)
    _run_app(settings, host=host, port=port)


def _prepare_case(settings: Settings, engine_url: str) -> DemoInfo:
    """Return the demo case, created or reused, with the scorer presets seeded first."""
    engine = make_engine(settings.resolved_database_url)
    migrate(engine)
    factory = make_session_factory(engine)
    with session_scope(factory) as session:
        scorer_service.seed_presets(session=session)
    info = prepare_demo(session_factory=factory, engine_url=engine_url)
    engine.dispose()
    return info


def _print_welcome(host: str, port: int) -> None:
    """Tell the user where the app is, how to log in and how to stop it."""
    print(
        f"\n  Relevo is at http://{host}:{port}/\n"
        f"  Log in as {DEMO_EMAIL} with the password {DEMO_PASSWORD}\n"
        "  Ctrl-C stops the server and the engine.\n",
        flush=True,
    )


def _run_app(settings: Settings, *, host: str, port: int) -> None:
    """Serve the app with uvicorn until it is stopped."""
    import uvicorn

    from app.main import create_app

    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")

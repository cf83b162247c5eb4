"""`relevo demo`: the embedded engine, the demo case and the app, stopped together by Ctrl-C."""

from __future__ import annotations

import sys

from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.demo.corpus import index_movies, start_osmem
from app.demo.setup import DEMO_EMAIL, DEMO_PASSWORD, prepare_demo
from app.services import scorers as scorer_service


def serve_demo(*, settings: Settings, host: str, port: int) -> int:
    """Start osmem with the movies, prepare the demo, serve the UI; return the exit code."""
    import uvicorn

    from app.main import create_app

    print("Starting the embedded search engine (osmem-server)…", flush=True)
    server = start_osmem()
    try:
        count = index_movies(server.url, "movies")
        print(f"Indexed {count} movies at {server.url}/movies", flush=True)
        engine = make_engine(settings.resolved_database_url)
        migrate(engine)
        factory = make_session_factory(engine)
        with session_scope(factory) as session:
            scorer_service.seed_presets(session=session)
        info = prepare_demo(session_factory=factory, engine_url=server.url)
        engine.dispose()
        word = "Created" if info.created else "Reusing"
        print(f"{word} the demo case (id {info.case_id}).", flush=True)
        print(
            f"\n  Relevo is at http://{host}:{port}/\n"
            f"  Log in as {DEMO_EMAIL} with the password {DEMO_PASSWORD}\n"
            "  Ctrl-C stops the server and the engine.\n",
            flush=True,
        )
        uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        print("Stopped the server and the engine.", file=sys.stderr)
    return 0

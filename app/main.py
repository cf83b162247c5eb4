"""The composition root: create_app(settings) builds the whole application."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker
from starlette.middleware.sessions import SessionMiddleware

from app.accounts.throttle import LoginThrottle
from app.agents.api import http_server as mcp_http_server
from app.agents.api import mount as mount_mcp
from app.clicks.api import INGEST_PATH as CLICKS_INGEST_PATH
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.endpoints.api.endpoints import RESULTS_PATH as RESULTS_UPLOAD_PATH
from app.endpoints.web import RESULTS_PAGE_PATH as RESULTS_UPLOAD_PAGE_PATH
from app.errors import LoginRequired
from app.interop.api.ratings import IMPORT_PATH as RATINGS_IMPORT_PATH
from app.interop.web.ratings import IMPORT_PATH as RATINGS_IMPORT_PAGE_PATH
from app.jobs.registry import Job, Resources
from app.jobs.ticker import Ticker
from app.judges.launch import JUDGE_MANAGER, judge_client_of
from app.outbound.policy import install_policy, policy_of
from app.registration import register_jobs
from app.runs.manager import RunManager
from app.runs.queue import START_RUN
from app.runtime import tune_gc
from app.sandbox import JsPool, install_pool
from app.schedules.delivery import config_from as delivery_config_from
from app.schedules.delivery import install_config as install_delivery
from app.scorers import service as scorer_service
from app.secret_box import Keyring, install_keyring, prepare_keyring
from app.sweeps import service as sweep_service
from app.web_common.errors import install_error_handlers
from app.web_common.middleware import (
    BaseUrlMiddleware,
    BodyLimitMiddleware,
    SecurityHeadersMiddleware,
    TransactionMiddleware,
)
from app.web_common.redirects import see_other

if TYPE_CHECKING:
    from app.runs.queue import RunQueue

__all__ = ["create_app"]

ROOT = Path(__file__).resolve().parent.parent
STATIC_DIR = ROOT / "static"
# Routes (path regular expressions) that accept bodies up to Settings.max_upload_bytes
# (RELEVO_MAX_UPLOAD_MB) instead of max_body_bytes (RELEVO_MAX_BODY_MB): uploads go here.
LARGE_BODY_PATHS: tuple[str, ...] = (
    RATINGS_IMPORT_PATH,
    CLICKS_INGEST_PATH,
    RATINGS_IMPORT_PAGE_PATH,
    RESULTS_UPLOAD_PATH,
    RESULTS_UPLOAD_PAGE_PATH,
)


log = logging.getLogger(__name__)


def create_app(settings: Settings) -> FastAPI:
    """Return the Relevo app for these settings; the database is migrated when it starts."""
    settings = settings.with_secret()
    assert settings.secret_key is not None
    engine = make_engine(settings.resolved_database_url)
    session_factory = make_session_factory(engine)
    lifespan = _lifespan(settings, engine, session_factory)
    app = FastAPI(title="Relevo", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    _set_state(app, settings, engine, session_factory)
    _install_process_policies(settings)
    _add_middleware(app, settings, secret_key=settings.secret_key)
    _add_error_handlers(app)
    _include_routers(app)
    mount_mcp(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _lifespan(
    settings: Settings, engine: Engine, session_factory: sessionmaker[Session]
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Return the app's lifespan: migrate, then look after runs and schedules until it stops."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tune_gc()
        js_pool = JsPool()  # this app's JavaScript workers, stopped when it stops
        previous_pool = install_pool(js_pool)
        _prepare_database(settings, engine, session_factory)
        queue = await _open_queue(settings, session_factory)
        manager = _run_manager(settings, session_factory, queue)
        # Only runs whose process has gone silent: another replica's runs go on.
        manager.start_reaper()
        app.state.run_manager = manager
        # Judge trials use the manager's judge client: its limits are the judge runs' too.
        app.state.judge_client = judge_client_of(manager)
        ticker = _schedule_ticker(settings, session_factory, manager)
        try:
            async with mcp_http_server(app):  # MCP over streamable HTTP at /mcp
                yield
        finally:
            if ticker is not None:
                await ticker.aclose()
            await manager.aclose()
            if queue is not None:
                await queue.close()
            install_pool(previous_pool)
            await asyncio.to_thread(js_pool.close)
            engine.dispose()

    return lifespan


def _prepare_database(
    settings: Settings, engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    """Check the keys open the stored secrets, migrate, seed presets, fail interrupted sweeps."""
    keys, data_dir = settings.encryption_keys, settings.data_dir
    install_keyring(prepare_keyring(engine, keys=keys, data_dir=data_dir))  # or refuse
    migrate(engine)
    with session_scope(session_factory) as session:
        scorer_service.seed_presets(session=session)
        if not settings.uses_queue:  # queued sweeps belong to no process
            sweep_service.fail_interrupted_sweeps(session=session)


async def _open_queue(
    settings: Settings, session_factory: sessionmaker[Session]
) -> RunQueue | None:
    """Open the PostgreSQL job queue; None with SQLite, where runs execute in this process."""
    if not settings.uses_queue:
        return None
    from app.runs.queue import RunQueue

    queue = RunQueue(
        database_url=settings.resolved_database_url,
        session_factory=session_factory,
        chunk_size=settings.run_chunk_size,
    )
    await queue.open()
    return queue


def _run_manager(
    settings: Settings, session_factory: sessionmaker[Session], queue: RunQueue | None
) -> RunManager:
    """Return the run manager of this process (called in the running event loop)."""
    return RunManager(
        session_factory=session_factory,
        loop=asyncio.get_running_loop(),
        max_waits_per_user=settings.max_waits_per_user,
        lease_s=settings.run_lease_s,
        queue=queue,
        stalled_s=settings.worker_stalled_s,
    )


def _set_state(
    app: FastAPI, settings: Settings, engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    """Put the settings, the database and the login throttle on app.state."""
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = session_factory
    app.state.login_throttle = LoginThrottle(
        per_account=settings.login_attempts_per_account,
        per_address=settings.login_attempts_per_address,
        window_s=settings.login_window_s,
    )


def _install_process_policies(settings: Settings) -> None:
    """Install the keyring of stored secrets and the policy of outbound engine requests."""
    # The key file is made (if need be) when the app starts and sees the database.
    install_keyring(Keyring.configured(keys=settings.encryption_keys, data_dir=settings.data_dir))
    install_policy(policy_of(settings))


def _add_middleware(app: FastAPI, settings: Settings, *, secret_key: str) -> None:
    """Add the transaction, session, body limit, security headers and base URL middleware."""
    app.add_middleware(TransactionMiddleware)  # innermost: the request's one transaction
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret_key,
        session_cookie="relevo_session",
        max_age=settings.session_max_age_s,
        same_site="lax",
        https_only=settings.https_only_cookies,
    )
    app.add_middleware(
        BodyLimitMiddleware,
        limit=settings.max_body_bytes,
        large_limit=settings.max_upload_bytes,
        large_paths=LARGE_BODY_PATHS,
    )
    app.add_middleware(SecurityHeadersMiddleware)
    if settings.base_url:
        app.add_middleware(BaseUrlMiddleware, base_url=settings.base_url)


def _add_error_handlers(app: FastAPI) -> None:
    """Install the JSON and HTML error handlers; a page that needs a login redirects to it."""
    install_error_handlers(app)

    async def login_required(request: Request, _exc: Exception) -> RedirectResponse:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        login = request.url_for("login_page").include_query_params(next=target)
        return see_other(login)

    app.add_exception_handler(LoginRequired, login_required)


def _schedule_ticker(
    settings: Settings, session_factory: sessionmaker[Session], manager: RunManager
) -> Ticker | None:
    """Install the alert delivery settings and register the domains' jobs and hooks (runs
    evaluate alerts as they end); without a job queue, do the minute's work here."""
    install_delivery(delivery_config_from(settings))
    register_jobs()
    if settings.uses_queue:  # workers do it (the job queue's periodic job)
        return None

    async def start_run(run_id: int) -> None:
        manager.start(run_id)

    resources = Resources()
    resources.put(START_RUN, start_run)
    # A judge run left "running" by a stopped server goes on here, by itself.
    resources.put(JUDGE_MANAGER, manager)
    ticker = Ticker(job=Job(session_factory, resources), every_s=settings.schedule_tick_s)
    ticker.start()
    return ticker


def _include_routers(app: FastAPI) -> None:
    from app.routes import api_router, web_router
    from app.web_common.docs_page import router as docs_router

    app.include_router(api_router)
    app.include_router(web_router)
    app.include_router(docs_router)

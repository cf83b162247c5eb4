"""Database engine, sessions and migrations."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

__all__ = [
    "after_commit",
    "alembic_config",
    "make_engine",
    "make_session_factory",
    "migrate",
    "session_scope",
]

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def make_engine(url: str) -> Engine:
    """Return an engine; SQLite gets foreign keys, WAL and a busy timeout."""
    if url.startswith("sqlite"):
        if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            json_serializer=dumps,
            json_deserializer=orjson.loads,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=10,
        json_serializer=dumps,
        json_deserializer=orjson.loads,
    )


def dumps(value: Any) -> str:
    """Serialize a JSON column's value: orjson (a run stores thousands of docs at once).

    Values orjson refuses (integers beyond 64 bits, say, from an engine's document) go
    through the standard library instead of failing the write.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Return the session factory used by requests, runs and the CLI."""
    return sessionmaker(bind=engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """Yield a session for one unit of work of a job or command: committed when the block
    ends, rolled back if it raises, closed either way (services only flush)."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def alembic_config(url: str) -> Config:
    """Return an Alembic config pointing at the project's migrations and the given database."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


# Any constant of our own: the key of the PostgreSQL advisory lock migrations take.
MIGRATION_LOCK = 7_340_051_772


def migrate(engine: Engine) -> None:
    """Bring the database schema to the newest migration, one process at a time."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # A server and the workers it starts all migrate as they start: two at once on a
            # new database would both create alembic_version. The lock is the transaction's.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        cfg = alembic_config(engine.url.render_as_string(hide_password=False))
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "head")


def ours(name: str | None, type_: str, _parents: Any) -> bool:
    """Alembic's name filter: the job queue's tables are procrastinate's, not our models'."""
    return not (type_ == "table" and (name or "").startswith("procrastinate_"))


# session.info key of the work to do once the session's transaction has committed.
AFTER_COMMIT = "relevo.after_commit"


def after_commit(session: Session, callback: Callable[[], object]) -> None:
    """Do ``callback`` once the session's transaction has committed; never if it rolls back.

    For work that another connection must see committed: starting a run, queueing a job.
    Callbacks run in the committing thread, in the order given; the first error among them
    is raised from ``commit()`` once they have all run.
    """
    session.info.setdefault(AFTER_COMMIT, []).append(callback)


@event.listens_for(Session, "after_commit")
def _run_after_commit(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint released: the transaction goes on
        return
    callbacks: list[Callable[[], object]] = session.info.pop(AFTER_COMMIT, [])
    failure: BaseException | None = None
    for callback in callbacks:
        try:
            callback()
        except Exception as exc:
            failure = failure or exc
    if failure is not None:
        raise failure


@event.listens_for(Session, "after_transaction_end")
def _drop_after_commit(session: Session, transaction: SessionTransaction) -> None:
    # The transaction ended without a commit (rolled back, or the session closed): its
    # deferred work is dropped. After a commit the list is already empty.
    if transaction.parent is None:
        session.info.pop(AFTER_COMMIT, None)


def as_utc(moment: datetime) -> datetime:
    """Return the moment as an aware UTC datetime (SQLite hands back naive ones)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

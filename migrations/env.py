"""Alembic environment: runs on a connection handed over by app.db.migrate, or on a URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from app.db import ours
from app.models import Base

config = context.config
target_metadata = Base.metadata


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        include_name=ours,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    try:
        with engine.begin() as conn:
            _migrate(conn)
    finally:
        engine.dispose()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

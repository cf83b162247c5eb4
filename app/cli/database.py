"""The database the commands open, and `relevo db upgrade`."""

from __future__ import annotations

import argparse

from sqlalchemy.orm import Session, sessionmaker

from app.cli.encryption import check_stored_secrets
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.scorers import service as scorer_service

__all__ = ["register", "session_factory"]


def session_factory(settings: Settings) -> sessionmaker[Session]:
    """Migrate the database, seed the scorer presets and return its session factory."""
    check_stored_secrets(settings)  # no key is made for a database with secrets it cannot open
    engine = make_engine(settings.resolved_database_url)
    migrate(engine)
    factory = make_session_factory(engine)
    with session_scope(factory) as session:
        scorer_service.seed_presets(session=session)
    return factory


def cmd_db_upgrade(_args: argparse.Namespace, settings: Settings) -> int:
    session_factory(settings)
    print(f"Database at {settings.resolved_database_url.split('@')[-1]} is up to date.")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo db` to the relevo parser."""
    db = sub.add_parser("db", help="database commands").add_subparsers(dest="db", required=True)
    db.add_parser("upgrade", help="apply migrations").set_defaults(func=cmd_db_upgrade)

"""`relevo secrets ...`: the keys that seal stored secrets."""

from __future__ import annotations

import argparse
import sys

from cryptography.fernet import Fernet

from app.config import Settings
from app.db import make_engine, migrate
from app.secret_box import reseal_all

__all__ = ["register"]


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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo secrets ...` to the relevo parser."""
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

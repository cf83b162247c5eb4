"""`relevo secrets ...`: the keys that seal stored secrets; the check every process starts with."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy import make_url

from app.config import Settings
from app.db import make_engine, migrate
from app.secret_box import (
    Keyring,
    SecretsLocked,
    check_keys,
    install_keyring,
    keyring_for_database,
    reseal_all,
    unreadable_secrets,
)

__all__ = ["check_stored_secrets", "register"]


def check_stored_secrets(settings: Settings) -> None:
    """Raise SecretsLocked when the configured keys do not open the stored secrets (or there
    is no key for a database that holds some); change nothing, create no database."""
    url = make_url(settings.resolved_database_url)
    if url.get_backend_name() == "sqlite" and not Path(url.database or "").exists():
        return  # a database still to be made holds no secret
    engine = make_engine(settings.resolved_database_url)
    try:
        check_keys(engine, keys=settings.encryption_keys, data_dir=settings.data_dir)
    finally:
        engine.dispose()


def cmd_secrets_rotate(args: argparse.Namespace, settings: Settings) -> int:
    """Re-seal every stored secret with the first key of RELEVO_ENCRYPTION_KEYS."""
    drop = bool(args.drop_unreadable)
    keys, data_dir = settings.encryption_keys, settings.data_dir
    engine = make_engine(settings.resolved_database_url)
    try:
        with engine.connect() as connection:
            try:
                keyring = keyring_for_database(connection, keys=keys, data_dir=data_dir)
            except SecretsLocked:
                if not drop:
                    raise
                keyring = None  # the keys are lost for good: a new one seals from now on
        install_keyring(keyring or Keyring.load(keys=keys, data_dir=data_dir))
        migrate(engine)  # plaintext and sealed:v1: values are bound by the migration
        with engine.begin() as connection:
            report = reseal_all(connection, drop_unreadable=drop)
    finally:
        engine.dispose()
    print(f"Re-sealed {report.resealed} stored secrets with the newest encryption key.")
    if report.dropped:
        print(
            f"Removed {len(report.unreadable)} secrets that no key opens (enter them again): "
            + ", ".join(report.unreadable),
            file=sys.stderr,
        )
    elif report.unreadable:
        print(
            f"{len(report.unreadable)} secrets open with none of the keys and were left as they "
            "are (keep the old key until they are entered again, or remove them with "
            "--drop-unreadable): " + ", ".join(report.unreadable),
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_secrets_check(_args: argparse.Namespace, settings: Settings) -> int:
    """Say whether the configured keys open every stored secret; change nothing."""
    engine = make_engine(settings.resolved_database_url)
    try:
        with engine.connect() as connection:
            keyring = keyring_for_database(
                connection, keys=settings.encryption_keys, data_dir=settings.data_dir
            )
            unreadable = [] if keyring is None else unreadable_secrets(connection, keyring)
            connection.rollback()
    finally:
        engine.dispose()
    if unreadable:
        print(
            f"{len(unreadable)} stored secrets open with none of the configured keys: "
            + ", ".join(unreadable),
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
    rotate = secrets.add_parser(
        "rotate", help="re-seal every stored secret with the first RELEVO_ENCRYPTION_KEYS key"
    )
    rotate.add_argument(
        "--drop-unreadable",
        action="store_true",
        help="remove the stored secrets no configured key opens (their keys are lost for good)",
    )
    rotate.set_defaults(func=cmd_secrets_rotate)
    secrets.add_parser(
        "check", help="exit 1, naming them, if stored secrets open with none of the keys"
    ).set_defaults(func=cmd_secrets_check)
    secrets.add_parser("new-key", help="print a new encryption key").set_defaults(
        func=cmd_secrets_new_key
    )

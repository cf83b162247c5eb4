"""The `relevo` command: serve, database, users, API keys, runs for CI pipelines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli import accounts, agents, database, encryption, processes, run_case
from app.config import Settings
from app.errors import RelevoError
from app.outbound.policy import install_policy, policy_of
from app.runtime import tune_gc
from app.sandbox import JsPool, install_pool
from app.schedules import cli as schedules_cli
from app.secret_box import KeyConfigError, Keyring, install_keyring

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the relevo command."""
    parser = argparse.ArgumentParser(prog="relevo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    processes.register_serve(sub)
    processes.register_worker(sub)
    database.register(sub)
    accounts.register_users(sub)
    encryption.register(sub)
    accounts.register_api_keys(sub)
    run_case.register(sub)
    schedules_cli.register(sub, database.session_factory)
    processes.register_demo(sub)
    agents.register(sub)
    return parser


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
    # Every command's outbound calls (`relevo run`, webhooks, deliveries) obey the settings.
    previous_policy = install_policy(policy_of(settings))
    # The command's JavaScript workers (the app and `relevo worker` install their own).
    with JsPool() as js_pool:
        previous = install_pool(js_pool)
        try:
            code: int = args.func(args, settings)
        except RelevoError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        except KeyConfigError as exc:  # the stored secrets would not open: do not start
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            install_pool(previous)
            install_policy(previous_policy)
    return code

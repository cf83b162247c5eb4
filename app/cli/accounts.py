"""`relevo users ...` and `relevo api-keys create`: accounts for operators."""

from __future__ import annotations

import argparse
import sys

from app.accounts import admin as admin_service
from app.accounts import service as user_service
from app.cli.database import session_factory
from app.config import Settings
from app.db import session_scope

__all__ = ["register_api_keys", "register_users"]


def cmd_users_create(args: argparse.Namespace, settings: Settings) -> int:
    if not args.password_stdin:
        print("Give the password on standard input with --password-stdin.", file=sys.stderr)
        return 2
    password = sys.stdin.readline().rstrip("\r\n")
    with session_scope(session_factory(settings)) as session:
        user = user_service.create_user(
            session=session, email=args.email, password=password, is_admin=args.admin
        )
        print(f"Created user {user.email} (id {user.id}).")
    return 0


def cmd_users_list(_args: argparse.Namespace, settings: Settings) -> int:
    with session_scope(session_factory(settings)) as session:
        for user in admin_service.list_users(session=session):
            flags = [
                word
                for word, on in (("admin", user.is_admin), ("disabled", user.is_disabled))
                if on
            ]
            print(f"{user.id}\t{user.email}\t{','.join(flags) or '-'}")
    return 0


def cmd_users_disable(args: argparse.Namespace, settings: Settings) -> int:
    with session_scope(session_factory(settings)) as session:
        user = admin_service.find_user(session=session, email=args.email)
        admin_service.set_disabled(session=session, admin=None, user=user, disabled=args.disable)
        state = "disabled: its sessions and API keys stop working" if args.disable else "enabled"
        print(f"User {user.email} is {state}.")
    return 0


def cmd_users_reset_password(args: argparse.Namespace, settings: Settings) -> int:
    if not args.password_stdin:
        print("Give the new password on standard input with --password-stdin.", file=sys.stderr)
        return 2
    password = sys.stdin.readline().rstrip("\r\n")
    with session_scope(session_factory(settings)) as session:
        user = admin_service.find_user(session=session, email=args.email)
        admin_service.reset_password(session=session, user=user, password=password)
        print(f"New password set for {user.email}; their browser sessions have ended.")
    return 0


def cmd_api_keys_create(args: argparse.Namespace, settings: Settings) -> int:
    with session_scope(session_factory(settings)) as session:
        user = user_service.get_by_email(session=session, email=args.email)
        if user is None:
            print(f"No user with the email {args.email}.", file=sys.stderr)
            return 1
        scopes = None if args.scopes is None else args.scopes.split(",")
        _key, clear = user_service.create_api_key(
            session=session,
            user=user,
            name=args.name,
            can_manage_keys=scopes is None,
            scopes=scopes,
        )
    print("New API key (shown only once):", file=sys.stderr)
    print(clear)
    return 0


def register_users(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo users ...` to the relevo parser."""
    users = sub.add_parser("users", help="accounts").add_subparsers(dest="users", required=True)
    create = users.add_parser("create", help="create a user")
    create.add_argument("email")
    create.add_argument("--password-stdin", action="store_true", help="read the password")
    create.add_argument("--admin", action="store_true")
    create.set_defaults(func=cmd_users_create)
    users.add_parser("list", help="list every account").set_defaults(func=cmd_users_list)
    for name, disable in (("disable", True), ("enable", False)):
        toggle = users.add_parser(name, help=f"{name} an account (sessions and keys)")
        toggle.add_argument("email")
        toggle.set_defaults(func=cmd_users_disable, disable=disable)
    reset = users.add_parser("reset-password", help="set a new password for an account")
    reset.add_argument("email")
    reset.add_argument("--password-stdin", action="store_true", help="read the password")
    reset.set_defaults(func=cmd_users_reset_password)


def register_api_keys(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo api-keys create` to the relevo parser."""
    keys = sub.add_parser("api-keys", help="API keys").add_subparsers(dest="keys", required=True)
    key = keys.add_parser("create", help="create a key; printed once, as the last line")
    key.add_argument("email")
    key.add_argument("--name", default="cli")
    key.add_argument(
        "--scopes",
        default=None,
        help="comma-separated: read,run,write,judge (default: all, and the right to manage "
        "keys); an agent's key for `relevo mcp`: --scopes read",
    )
    key.set_defaults(func=cmd_api_keys_create)

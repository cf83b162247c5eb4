"""Settings: read from the environment once, by the caller, and passed to create_app."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = ["Settings", "listen_url"]

SECRET_FILE = "secret_key"


@dataclass(frozen=True)
class Settings:
    """Everything the app needs to start; nothing here touches the environment by itself."""

    data_dir: Path = Path(".relevo")
    database_url: str | None = None
    secret_key: str | None = None
    session_max_age_s: int = 14 * 24 * 3600
    https_only_cookies: bool = False
    base_url: str | None = None
    # The address `relevo serve` or `relevo demo` binds (as listen_url() writes it): alert
    # links use it when base_url is unset, so they reach this server on whatever port.
    listen_url: str | None = None
    session_idle_timeout_s: int = 8 * 3600
    max_body_bytes: int = 10 * 1024 * 1024
    max_upload_bytes: int = 200 * 1024 * 1024
    max_engine_response_bytes: int = 20 * 1024 * 1024
    allowed_engine_hosts: tuple[str, ...] = ()
    # Loopback, private, link-local and reserved addresses are refused for every outbound
    # call (engines, judges, webhooks) unless a host is allowed by name or network.
    block_private_addresses: bool = True
    # Hosts allowed on top of those, private or not, without limiting the others: set by
    # code that starts its own engine (`relevo demo`), never read from the environment.
    trusted_engine_hosts: tuple[str, ...] = ()
    login_attempts_per_account: int = 10
    login_attempts_per_address: int = 50
    login_window_s: int = 15 * 60
    # A running run writes a heartbeat every few seconds; one silent for this long belongs
    # to a process that is gone and is marked interrupted (by any replica).
    run_lease_s: int = 60
    # Requests waiting for their run (`?wait=true`) at once, per user; more get 429.
    max_waits_per_user: int = 4
    # Where runs execute: "inprocess" (in the web process; SQLite and tests) or "postgres"
    # (jobs in the PostgreSQL queue, executed by `relevo worker` processes).
    run_queue: str = "inprocess"
    # Queries per job when a run is split for workers.
    run_chunk_size: int = 100
    # A worker silent this long is gone: its chunks go back to the queue.
    worker_stalled_s: int = 30
    # Alerts by e-mail (smtp://[user:pass@]host:port, smtps://, smtp+starttls://) and sender.
    smtp_url: str | None = None
    alert_email_from: str = "relevo@localhost"
    # How often a server that fires schedules itself (no job queue) looks for due ones.
    schedule_tick_s: float = 15.0
    # Fernet keys for secrets at rest: the first seals, all unseal (app/secret_box/);
    # none: a key generated once and kept in the data directory.
    encryption_keys: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Return settings built from DATABASE_URL and the RELEVO_* variables (see README)."""
        env = os.environ if environ is None else environ
        base_url = (env.get("RELEVO_BASE_URL") or "").strip().rstrip("/") or None
        https_default = "1" if base_url and base_url.startswith("https://") else ""
        mb = 1024 * 1024
        return cls(
            data_dir=Path(env.get("RELEVO_DATA_DIR", ".relevo")),
            database_url=env.get("DATABASE_URL") or None,
            secret_key=env.get("RELEVO_SECRET_KEY") or None,
            https_only_cookies=_flag(env.get("RELEVO_HTTPS_ONLY", https_default)),
            base_url=base_url,
            session_idle_timeout_s=_int(env, "RELEVO_SESSION_IDLE_MINUTES", 8 * 60) * 60,
            max_body_bytes=_int(env, "RELEVO_MAX_BODY_MB", 10) * mb,
            max_upload_bytes=_int(env, "RELEVO_MAX_UPLOAD_MB", 200) * mb,
            max_engine_response_bytes=_int(env, "RELEVO_MAX_ENGINE_RESPONSE_MB", 20) * mb,
            allowed_engine_hosts=tuple(
                p.strip()
                for p in env.get("RELEVO_ALLOWED_ENGINE_HOSTS", "").split(",")
                if p.strip()
            ),
            block_private_addresses=_switch(env, "RELEVO_BLOCK_PRIVATE_ADDRESSES", default=True),
            run_lease_s=_int(env, "RELEVO_RUN_LEASE_S", 60),
            max_waits_per_user=_int(env, "RELEVO_MAX_WAITS_PER_USER", 4),
            run_queue=_run_queue(env),
            run_chunk_size=_int(env, "RELEVO_RUN_CHUNK_SIZE", 100),
            worker_stalled_s=_int(env, "RELEVO_WORKER_STALLED_S", 30),
            smtp_url=env.get("RELEVO_SMTP_URL") or None,
            alert_email_from=env.get("RELEVO_ALERT_EMAIL_FROM") or "relevo@localhost",
            encryption_keys=tuple(
                k.strip() for k in env.get("RELEVO_ENCRYPTION_KEYS", "").split(",") if k.strip()
            ),
        )

    @property
    def uses_queue(self) -> bool:
        """Whether runs go to the PostgreSQL job queue (else they execute in-process)."""
        return self.run_queue == "postgres"

    @property
    def resolved_database_url(self) -> str:
        """Return the database URL, defaulting to a SQLite file in the data directory."""
        if self.database_url:
            return normalise_database_url(self.database_url)
        return f"sqlite:///{(self.data_dir / 'relevo.db').resolve()}"

    def with_secret(self) -> Settings:
        """Return settings with a secret key, generated and kept in the data dir if absent."""
        if self.secret_key:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / SECRET_FILE
        if path.exists():
            key = path.read_text().strip()
        else:
            key = secrets.token_urlsafe(48)
            path.write_text(key + "\n")
            path.chmod(0o600)
        return replace(self, secret_key=key)


def listen_url(host: str, port: int) -> str:
    """Return the http:// address of a server bound to ``host``:``port``, as a link on this
    machine reaches it (a wildcard bind, 0.0.0.0 or ::, becomes the loopback address)."""
    name = host.strip() or "127.0.0.1"
    if name == "0.0.0.0":
        name = "127.0.0.1"
    elif name.strip("[]") == "::":
        name = "::1"
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"http://{name}:{port}"


RUN_QUEUES = ("inprocess", "postgres")


def _run_queue(env: Mapping[str, str]) -> str:
    # Default: the queue on PostgreSQL, in-process on SQLite.
    raw = env.get("RELEVO_RUN_QUEUE", "").strip().lower()
    if not raw or raw == "auto":
        url = normalise_database_url(env.get("DATABASE_URL") or "")
        return "postgres" if url.startswith("postgresql") else "inprocess"
    if raw not in RUN_QUEUES:
        raise ValueError(f"RELEVO_RUN_QUEUE must be auto, inprocess or postgres, not {raw!r}")
    if raw == "postgres" and not normalise_database_url(env.get("DATABASE_URL") or "").startswith(
        "postgresql"
    ):
        raise ValueError("RELEVO_RUN_QUEUE=postgres needs DATABASE_URL to be a PostgreSQL URL")
    return raw


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _switch(env: Mapping[str, str], name: str, *, default: bool) -> bool:
    # Strict, unlike _flag: a typo must not turn a safety off (nor on) without a word.
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be 1 (on) or 0 (off), not {raw!r}")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive")
    return value


def normalise_database_url(url: str) -> str:
    """Return the URL with PostgreSQL pointed at the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url

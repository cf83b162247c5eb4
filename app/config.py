"""Settings: read from the environment once, by the caller, and passed to create_app."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = ["Settings"]

SECRET_FILE = "secret_key"


@dataclass(frozen=True)
class Settings:
    """Everything the app needs to start; nothing here touches the environment by itself."""

    data_dir: Path = Path(".relevo")
    database_url: str | None = None
    secret_key: str | None = None
    run_workers: int = 4
    session_max_age_s: int = 14 * 24 * 3600
    https_only_cookies: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Return settings built from DATABASE_URL, RELEVO_DATA_DIR and RELEVO_SECRET_KEY."""
        env = os.environ if environ is None else environ
        return cls(
            data_dir=Path(env.get("RELEVO_DATA_DIR", ".relevo")),
            database_url=env.get("DATABASE_URL") or None,
            secret_key=env.get("RELEVO_SECRET_KEY") or None,
            https_only_cookies=env.get("RELEVO_HTTPS_ONLY", "") in ("1", "true", "yes"),
        )

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


def normalise_database_url(url: str) -> str:
    """Return the URL with PostgreSQL pointed at the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url

"""`relevo api-keys create --scopes`: a key for an agent, with only the rights it needs."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from app.accounts import service as users
from app.cli import main
from app.cli.database import session_factory
from app.config import Settings
from app.db import session_scope
from app.models import ApiKey


def test_an_agent_key_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path / "data"))
    factory = session_factory(Settings.from_env())
    with session_scope(factory) as session:
        users.create_user(session=session, email="me@example.com", password="a long password 1")
    assert (
        main(["api-keys", "create", "me@example.com", "--name", "claude", "--scopes", "read,run"])
        == 0
    )
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["api-keys", "create", "me@example.com", "--scopes", "read,admin"]) == 2
    assert "Unknown scope 'admin'" in capsys.readouterr().err
    assert main(["api-keys", "create", "me@example.com", "--name", "ci"]) == 0
    with factory() as session:
        made = {k.name: k for k in session.scalars(select(ApiKey))}
        assert set(made) == {"claude", "ci"}
        assert (made["claude"].scopes, made["claude"].can_manage_keys) == ("read run", False)
        assert (made["ci"].scopes, made["ci"].can_manage_keys) == ("read run write judge", True)
        found = users.api_key_for(session=session, key=key)
        assert found is not None and found.name == "claude"

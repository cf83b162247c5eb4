"""A lost or wrong encryption key stops every process at its start, saying how to recover,
instead of sealing new secrets with a key that opens none of the stored ones."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session

from app import secret_box
from app.cli import main
from app.config import Settings
from app.db import make_engine, migrate
from app.main import create_app
from app.models import SearchEndpoint, User
from app.secret_box import KEY_FILE, Keyring, SecretsLocked
from app.vocabulary import Engine

KEY = Fernet.generate_key().decode()
OTHER = Fernet.generate_key().decode()


@pytest.fixture(autouse=True)
def _restore_keyring() -> Iterator[None]:
    previous = secret_box.install_keyring(None)
    secret_box.install_keyring(previous)
    yield
    secret_box.install_keyring(previous)


def _store_a_secret(url: str, keyring: Keyring, **endpoint: object) -> int:
    secret_box.install_keyring(keyring)
    engine = make_engine(url)
    migrate(engine)
    with Session(engine) as session:
        user = User(email=f"{len(str(endpoint))}@example.com", password_hash="x")
        session.add(user)
        session.flush()
        made = SearchEndpoint(
            name="e",
            engine=Engine.OPENSEARCH,
            url="http://127.0.0.1:9/x",
            owner_id=user.id,
            **({"basic_auth": "u:pw"} | endpoint),
        )
        session.add(made)
        session.commit()
        made_id = made.id
    engine.dispose()
    return made_id


def _start(settings: Settings) -> None:
    with TestClient(create_app(settings)):
        pass


def test_sqlite_with_its_key_file_lost_refuses_to_start_and_makes_no_new_key(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    settings = Settings(data_dir=data, secret_key="k" * 48)
    _start(settings)  # a new database: the key is generated
    key_file = data / KEY_FILE
    ring = Keyring.load(data_dir=data)
    _store_a_secret(settings.resolved_database_url, ring)
    shutil.move(key_file, tmp_path / "backup")

    with pytest.raises(SecretsLocked) as refused:
        _start(settings)
    message = str(refused.value)
    assert "1 sealed secrets" in message and str(key_file) in message
    assert "RELEVO_ENCRYPTION_KEYS" in message and "Restore" in message
    assert not key_file.exists()  # no new key that would seal with the wrong one

    shutil.move(tmp_path / "backup", key_file)  # the file is back: all is well
    _start(settings)


def test_keys_that_open_none_of_the_stored_secrets_refuse_to_start(empty_db_url: str) -> None:
    _store_a_secret(empty_db_url, Keyring((KEY,)))
    settings = Settings(
        data_dir=Path("/nonexistent"), database_url=empty_db_url, secret_key="k" * 48
    )
    with pytest.raises(SecretsLocked) as refused:
        _start(replace(settings, encryption_keys=(OTHER,)))
    assert "search_endpoints.basic_auth of row 1" in str(refused.value)
    assert "RELEVO_ENCRYPTION_KEYS" in str(refused.value)
    _start(replace(settings, encryption_keys=(OTHER, KEY)))


def test_the_commands_refuse_to_start_and_say_how_to_recover(
    empty_db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _store_a_secret(empty_db_url, Keyring((KEY,)))
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", OTHER)
    commands = [["serve", "--port", "1"], ["db", "upgrade"], ["demo", "--port", "1"]]
    if empty_db_url.startswith("postgresql"):
        commands.append(["worker"])
    for command in commands:
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert "open with none of the configured encryption keys" in err, command
        assert "RELEVO_ENCRYPTION_KEYS" in err and "--drop-unreadable" in err
    monkeypatch.delenv("RELEVO_ENCRYPTION_KEYS")  # and no key file either
    assert main(["serve", "--port", "1"]) == 2
    assert "no encryption key" in capsys.readouterr().err
    assert not (tmp_path / "data" / KEY_FILE).exists()


def test_rotate_can_drop_what_no_key_opens_and_a_typed_sealed_value_blocks_nothing(
    empty_db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Typed in by a user, a value that looks sealed is sealed like any other.
    typed = "sealed:v1:" + Fernet(OTHER.encode()).encrypt(b"x").decode()
    _store_a_secret(empty_db_url, Keyring((KEY,)), headers={"X-Typed": typed})
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", KEY)
    assert main(["secrets", "rotate"]) == 0
    assert main(["secrets", "check"]) == 0
    # A value whose key is gone for good (written before this version, say) is named by
    # rotate and check, and removed on request; then the processes start again.
    engine = make_engine(empty_db_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE search_endpoints SET basic_auth = :v"), {"v": typed})
    assert main(["secrets", "rotate"]) == 1
    assert "search_endpoints.basic_auth of row 1" in capsys.readouterr().err
    assert main(["db", "upgrade"]) == 2
    assert main(["secrets", "rotate", "--drop-unreadable"]) == 0
    assert "Removed 1 secrets" in capsys.readouterr().err
    with engine.connect() as conn:
        auth, headers = conn.execute(text("SELECT basic_auth, headers FROM search_endpoints")).one()
    engine.dispose()
    assert auth is None and "X-Typed" in str(headers)
    assert main(["secrets", "check"]) == 0
    assert main(["db", "upgrade"]) == 0

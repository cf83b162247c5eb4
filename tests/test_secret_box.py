"""Secrets at rest: the key ring, the data directory's key, migration 0018 and rotation."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text

from app import secret_box
from app.cli import main
from app.db import alembic_config
from app.models import SearchEndpoint
from app.secret_box import (
    PREFIX,
    KeyConfigError,
    Keyring,
    SealedColumn,
    SecretUnreadable,
    reseal_column,
)

KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()


@pytest.fixture(autouse=True)
def _restore_keyring() -> Iterator[None]:
    # The tests install key rings of their own; the process's one (or none yet) comes back.
    previous = secret_box.install_keyring(None)
    secret_box.install_keyring(previous)
    yield
    secret_box.install_keyring(previous)


def test_round_trip_with_a_recognisable_prefix() -> None:
    ring = Keyring((KEY_A,))
    token = ring.seal("Bearer s3cret ünïcode")
    assert token.startswith("sealed:v1:") and "s3cret" not in token
    assert ring.unseal(token) == "Bearer s3cret ünïcode"
    # Each seal is fresh (random IV): equal secrets do not look equal at rest.
    assert ring.seal("same") != ring.seal("same")


def test_plaintext_from_before_sealing_reads_as_it_is() -> None:
    assert Keyring((KEY_A,)).unseal("user:password") == "user:password"
    assert not secret_box.is_sealed("user:password")


def test_module_functions_use_the_installed_keyring_and_do_not_seal_twice() -> None:
    secret_box.install_keyring(Keyring((KEY_A,)))
    token = secret_box.seal("k")
    assert secret_box.seal(token) == token
    assert Keyring((KEY_A,)).unseal(token) == "k"
    assert secret_box.unseal(token) == "k"
    sealed = secret_box.seal_values({"X-Key": "v", "X-Other": "w"})
    assert sorted(sealed) == ["X-Key", "X-Other"]
    assert all(v.startswith(PREFIX) for v in sealed.values())
    assert secret_box.unseal_values(sealed) == {"X-Key": "v", "X-Other": "w"}


def test_a_wrong_key_fails_with_a_message_naming_the_setting() -> None:
    token = Keyring((KEY_A,)).seal("s3cret")
    with pytest.raises(SecretUnreadable) as caught:
        Keyring((KEY_B,)).unseal(token)
    message = str(caught.value)
    assert "RELEVO_ENCRYPTION_KEYS" in message and "s3cret" not in message
    with pytest.raises(SecretUnreadable):
        Keyring((KEY_A,)).unseal(PREFIX + "not-a-token")


def test_all_keys_unseal_and_the_first_seals() -> None:
    old = Keyring((KEY_A,)).seal("s")
    both = Keyring((KEY_B, KEY_A))
    assert both.unseal(old) == "s"
    assert Keyring((KEY_B,)).unseal(both.seal("t")) == "t"
    rotated = both.reseal(old)
    assert Keyring((KEY_B,)).unseal(rotated) == "s"
    assert both.reseal("plain").startswith(PREFIX)


def test_bad_keys_are_refused_clearly_and_never_shown() -> None:
    with pytest.raises(KeyConfigError, match="number 2 is not a Fernet key"):
        Keyring.parse(f"{KEY_A}, not-a-key")
    with pytest.raises(KeyConfigError):
        Keyring(())
    assert KEY_A not in repr(Keyring((KEY_A,)))


def test_without_keys_one_is_generated_once_in_the_data_dir(tmp_path: Path) -> None:
    first = Keyring.load(data_dir=tmp_path / "data")
    path = tmp_path / "data" / secret_box.KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = Keyring.load(data_dir=tmp_path / "data")
    assert again.keys == first.keys
    assert again.unseal(first.seal("x")) == "x"
    # Configured keys win over the file.
    assert Keyring.load(keys=[KEY_A, " "], data_dir=tmp_path / "data").keys == (KEY_A,)


def _insert_plain_endpoints(url: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO users (id, email, password_hash, is_admin, created_at)"
                    " VALUES (1, 'a@example.com', 'x', false, CURRENT_TIMESTAMP)"
                )
            )
            for n, (headers, auth) in enumerate(
                [('{"X-Key": "plain-header", "X-Two": "two"}', "bob:plain-pw"), ("{}", None)],
                start=1,
            ):
                conn.execute(
                    text(
                        "INSERT INTO search_endpoints (id, owner_id, name, engine, url, method,"
                        " headers, basic_auth, timeout_s, requests_per_minute, max_concurrency,"
                        " created_at) VALUES (:id, 1, 'e', 'opensearch', 'http://127.0.0.1:1/x',"
                        " 'GET', :headers, :auth, 10, 0, 8, CURRENT_TIMESTAMP)"
                    ).bindparams(id=n, headers=headers, auth=auth)
                    if url.startswith("sqlite")
                    else text(
                        "INSERT INTO search_endpoints (id, owner_id, name, engine, url, method,"
                        " headers, basic_auth, timeout_s, requests_per_minute, max_concurrency,"
                        " created_at) VALUES (:id, 1, 'e', 'opensearch', 'http://127.0.0.1:1/x',"
                        " 'GET', CAST(:headers AS jsonb), :auth, 10, 0, 8, CURRENT_TIMESTAMP)"
                    ).bindparams(id=n, headers=headers, auth=auth)
                )
    finally:
        engine.dispose()


def _raw(url: str) -> list[tuple[object, str | None]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT headers, basic_auth FROM search_endpoints ORDER BY id")
            ).all()
    finally:
        engine.dispose()
    out: list[tuple[object, str | None]] = []
    for headers, auth in rows:
        if isinstance(headers, str):  # SQLite hands JSON back as text
            headers = json.loads(headers)
        out.append((headers, auth))
    return out


def test_the_migration_seals_plaintext_and_its_downgrade_restores_it(empty_db_url: str) -> None:
    secret_box.install_keyring(Keyring((KEY_A,)))
    config = alembic_config(empty_db_url)
    command.upgrade(config, "0017")
    _insert_plain_endpoints(empty_db_url)
    command.upgrade(config, "0018")
    (headers, auth), (empty, none) = _raw(empty_db_url)
    assert isinstance(headers, dict) and sorted(headers) == ["X-Key", "X-Two"]
    assert auth is not None and auth.startswith(PREFIX) and "plain-pw" not in auth
    assert all(v.startswith(PREFIX) for v in headers.values())
    assert "plain-header" not in str(headers)
    ring = Keyring((KEY_A,))
    assert ring.unseal(auth) == "bob:plain-pw"
    assert {k: ring.unseal(v) for k, v in headers.items()} == {
        "X-Key": "plain-header",
        "X-Two": "two",
    }
    assert (empty, none) == ({}, None)
    command.downgrade(config, "0017")
    assert _raw(empty_db_url)[0] == ({"X-Key": "plain-header", "X-Two": "two"}, "bob:plain-pw")


def test_rotate_with_two_keys_then_drop_the_old_one(
    empty_db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RELEVO_RUN_QUEUE", "inprocess")
    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", KEY_A)
    config = alembic_config(empty_db_url)
    command.upgrade(config, "0017")
    _insert_plain_endpoints(empty_db_url)
    assert main(["db", "upgrade"]) == 0  # sealed with key A by the migration
    (_headers_a, auth_a), _ = _raw(empty_db_url)
    assert auth_a is not None and Keyring((KEY_A,)).unseal(auth_a) == "bob:plain-pw"
    with pytest.raises(SecretUnreadable):
        Keyring((KEY_B,)).unseal(auth_a)

    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", f"{KEY_B},{KEY_A}")
    assert main(["secrets", "rotate"]) == 0
    (headers_b, auth_b), _ = _raw(empty_db_url)
    only_b = Keyring((KEY_B,))
    assert auth_b is not None and only_b.unseal(auth_b) == "bob:plain-pw"
    assert isinstance(headers_b, dict)
    assert {k: only_b.unseal(v) for k, v in headers_b.items()} == {
        "X-Key": "plain-header",
        "X-Two": "two",
    }

    # With the old key dropped, rotating again still works; a value sealed with a key
    # nobody has any more is reported, left alone, and the command fails.
    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", KEY_B)
    assert main(["secrets", "check"]) == 0
    assert main(["secrets", "rotate"]) == 0
    engine = create_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            lost = Keyring((Fernet.generate_key().decode(),)).seal("gone")
            conn.execute(
                text("UPDATE search_endpoints SET basic_auth = :a WHERE id = 2"), {"a": lost}
            )
    finally:
        engine.dispose()
    assert main(["secrets", "check"]) == 1
    assert "search_endpoints.basic_auth of row 2" in capsys.readouterr().err
    assert main(["secrets", "rotate"]) == 1
    assert _raw(empty_db_url)[1][1] == lost


def test_a_bad_key_in_the_environment_stops_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", "nope")
    assert main(["secrets", "rotate"]) == 2
    assert "not a Fernet key" in capsys.readouterr().err


def test_new_key_prints_a_usable_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("RELEVO_ENCRYPTION_KEYS", raising=False)
    assert main(["secrets", "new-key"]) == 0
    key = capsys.readouterr().out.strip()
    assert Keyring((key,)).unseal(Keyring((key,)).seal("x")) == "x"


def test_reseal_column_reports_unreadable_values_by_row(empty_db_url: str) -> None:
    secret_box.install_keyring(Keyring((KEY_A,)))
    config = alembic_config(empty_db_url)
    command.upgrade(config, "head")
    _insert_plain_endpoints(empty_db_url)
    engine = create_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            spec = SealedColumn("search_endpoints", "basic_auth")
            first = reseal_column(conn, spec, keyring=Keyring((KEY_A,)), mode="seal_plaintext")
            assert (first.resealed, first.unreadable) == (1, [])
            second = reseal_column(conn, spec, keyring=Keyring((KEY_B,)))
            assert second.unreadable == ["search_endpoints.basic_auth of row 1"]
    finally:
        engine.dispose()
    assert secret_box.SealedColumn("search_endpoints", "headers", "json_values") in (
        secret_box.registered_columns()
    )


def test_every_writer_of_an_endpoint_stores_sealed_values() -> None:
    # The model seals on assignment, so the Quepid import and the service alike store tokens.
    secret_box.install_keyring(Keyring((KEY_A,)))
    endpoint = SearchEndpoint(
        name="e", url="http://x:9/y", headers={"X-Key": "hv"}, basic_auth="u:p", owner_id=1
    )
    assert endpoint.headers["X-Key"].startswith(PREFIX)
    assert endpoint.basic_auth is not None and endpoint.basic_auth.startswith(PREFIX)
    sealed_auth = endpoint.basic_auth
    endpoint.basic_auth = sealed_auth  # a sealed value is kept, not sealed again
    assert endpoint.basic_auth == sealed_auth
    assert Keyring((KEY_A,)).unseal(endpoint.headers["X-Key"]) == "hv"
    endpoint.basic_auth = None
    assert endpoint.basic_auth is None

"""Secrets at rest: the key ring, the data directory's key, migration 0018 and rotation."""

from __future__ import annotations

import base64
import json
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from cryptography.fernet import Fernet
from sqlalchemy import MetaData, Table, create_engine, insert, text
from sqlalchemy.orm import Session

from app import secret_box
from app.cli import main
from app.db import alembic_config
from app.models import SearchEndpoint, User
from app.secret_box import (
    PREFIX,
    PREFIX_V1,
    KeyConfigError,
    Keyring,
    Place,
    SealedColumn,
    SecretUnreadable,
    reseal_column,
)
from app.vocabulary import Engine

KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()


@pytest.fixture(autouse=True)
def _restore_keyring() -> Iterator[None]:
    # The tests install key rings of their own; the process's one (or none yet) comes back.
    previous = secret_box.install_keyring(None)
    secret_box.install_keyring(previous)
    yield
    secret_box.install_keyring(previous)


HERE = Place("search_endpoints", "basic_auth", 1)


def test_round_trip_with_a_recognisable_prefix() -> None:
    ring = Keyring((KEY_A,))
    token = ring.seal("Bearer s3cret ünïcode", place=HERE)
    assert token.startswith("sealed:v2:") and "s3cret" not in token
    assert ring.unseal(token, place=HERE) == "Bearer s3cret ünïcode"
    # Each seal is fresh (random nonce): equal secrets do not look equal at rest.
    assert ring.seal("same", place=HERE) != ring.seal("same", place=HERE)


def test_a_sealed_value_opens_only_where_it_was_sealed() -> None:
    ring = Keyring((KEY_A,))
    token = ring.seal("s3cret", place=HERE)
    for elsewhere in (
        Place("search_endpoints", "basic_auth", 2),  # another row
        Place("search_endpoints", "headers", 1, "X-Key"),  # another column
        Place("judges", "api_key_sealed", 1),  # another table
        HERE.item("Authorization"),  # a header of the same row
    ):
        with pytest.raises(SecretUnreadable):
            ring.unseal(token, place=elsewhere)
    header = ring.seal("h", place=Place("judges", "headers", 3, "X-A"))
    with pytest.raises(SecretUnreadable):
        ring.unseal(header, place=Place("judges", "headers", 3, "X-B"))


def test_plaintext_from_before_sealing_and_unbound_v1_values_still_open() -> None:
    ring = Keyring((KEY_A,))
    assert ring.unseal("user:password", place=HERE) == "user:password"
    assert not secret_box.is_sealed("user:password")
    legacy = PREFIX_V1 + Fernet(KEY_A.encode()).encrypt(b"old").decode()
    assert secret_box.is_sealed(legacy)
    assert ring.unseal(legacy, place=HERE) == "old"
    rebound = ring.reseal(legacy, place=HERE)
    assert rebound.startswith(PREFIX) and ring.unseal(rebound, place=HERE) == "old"


def test_module_functions_use_the_installed_keyring_and_seal_whatever_they_get() -> None:
    secret_box.install_keyring(Keyring((KEY_A,)))
    token = secret_box.seal("k", place=HERE)
    assert Keyring((KEY_A,)).unseal(token, place=HERE) == "k"
    assert secret_box.unseal(token, place=HERE) == "k"
    # A value that looks sealed is sealed as it is, and opens as that text.
    again = secret_box.seal(token, place=HERE)
    assert again != token and secret_box.unseal(again, place=HERE) == token


def test_a_wrong_key_fails_with_a_message_naming_the_setting() -> None:
    token = Keyring((KEY_A,)).seal("s3cret", place=HERE)
    with pytest.raises(SecretUnreadable) as caught:
        Keyring((KEY_B,)).unseal(token, place=HERE)
    message = str(caught.value)
    assert "RELEVO_ENCRYPTION_KEYS" in message and "s3cret" not in message
    for damaged in (PREFIX + "not-a-token", PREFIX + "!!", PREFIX_V1 + "not-a-token"):
        with pytest.raises(SecretUnreadable):
            Keyring((KEY_A,)).unseal(damaged, place=HERE)


def test_all_keys_unseal_and_the_first_seals() -> None:
    old = Keyring((KEY_A,)).seal("s", place=HERE)
    both = Keyring((KEY_B, KEY_A))
    assert both.unseal(old, place=HERE) == "s"
    assert Keyring((KEY_B,)).unseal(both.seal("t", place=HERE), place=HERE) == "t"
    rotated = both.reseal(old, place=HERE)
    assert Keyring((KEY_B,)).unseal(rotated, place=HERE) == "s"
    assert both.reseal("plain", place=HERE).startswith(PREFIX)


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
    assert again.unseal(first.seal("x", place=HERE), place=HERE) == "x"
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


def _header(row_id: int, name: str) -> Place:
    return Place("search_endpoints", "headers", row_id, name)


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
    assert ring.unseal(auth, place=HERE) == "bob:plain-pw"
    assert {k: ring.unseal(v, place=_header(1, k)) for k, v in headers.items()} == {
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
    assert auth_a is not None and Keyring((KEY_A,)).unseal(auth_a, place=HERE) == "bob:plain-pw"
    with pytest.raises(SecretUnreadable):
        Keyring((KEY_B,)).unseal(auth_a, place=HERE)

    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", f"{KEY_B},{KEY_A}")
    assert main(["secrets", "rotate"]) == 0
    (headers_b, auth_b), _ = _raw(empty_db_url)
    only_b = Keyring((KEY_B,))
    assert auth_b is not None and only_b.unseal(auth_b, place=HERE) == "bob:plain-pw"
    assert isinstance(headers_b, dict)
    assert {k: only_b.unseal(v, place=_header(1, k)) for k, v in headers_b.items()} == {
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
            lost = Keyring((Fernet.generate_key().decode(),)).seal("gone", place=HERE)
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
    assert Keyring((key,)).unseal(Keyring((key,)).seal("x", place=HERE), place=HERE) == "x"


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


def test_every_writer_of_an_endpoint_stores_values_sealed_for_their_row(db: Session) -> None:
    # The flush seals what is set in clear (a new row's once it has its id), so the Quepid
    # import and the service alike store bound tokens, and a value that looks sealed is
    # sealed again rather than kept.
    secret_box.install_keyring(Keyring((KEY_A,)))
    user = User(email="writer@example.com", password_hash="x")
    db.add(user)
    db.flush()
    looks_sealed = Keyring((KEY_A,)).seal("someone else's", place=Place("judges", "x", 9))
    endpoint = SearchEndpoint(
        name="e",
        engine=Engine.OPENSEARCH,
        url="http://x:9/y",
        headers={"X-Key": "hv", "X-Copied": looks_sealed},
        basic_auth="u:p",
        owner_id=user.id,
    )
    db.add(endpoint)
    db.flush()
    stored = db.execute(
        text("SELECT headers, basic_auth FROM search_endpoints WHERE id = :id"),
        {"id": endpoint.id},
    ).one()
    headers = json.loads(stored[0]) if isinstance(stored[0], str) else stored[0]
    assert (
        all(v.startswith(PREFIX) for v in headers.values()) and headers["X-Copied"] != looks_sealed
    )
    assert endpoint.headers == headers and endpoint.basic_auth == stored[1]
    assert secret_box.opened(endpoint, "headers") == {"X-Key": "hv", "X-Copied": looks_sealed}
    assert secret_box.opened(endpoint, "basic_auth") == "u:p"
    endpoint.basic_auth = "v:q"  # a change to a stored row is sealed at the next flush
    db.flush()
    assert endpoint.basic_auth is not None and endpoint.basic_auth.startswith(PREFIX)
    assert secret_box.opened(endpoint, "basic_auth") == "v:q"
    endpoint.basic_auth = None
    db.flush()
    assert endpoint.basic_auth is None


def _v1(key: str, plaintext: str) -> str:
    return PREFIX_V1 + Fernet(key.encode()).encrypt(plaintext.encode()).decode()


def _table(engine: Any, name: str) -> Table:
    return Table(name, MetaData(), autoload_with=engine)


def test_migration_0020_binds_old_values_and_moves_url_credentials(empty_db_url: str) -> None:
    secret_box.install_keyring(Keyring((KEY_A,)))
    config = alembic_config(empty_db_url)
    command.upgrade(config, "0019")
    _insert_plain_endpoints(empty_db_url)  # row 1: plaintext headers and basic auth
    engine = create_engine(empty_db_url)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE search_endpoints SET basic_auth = :a WHERE id = 2"),
            {"a": _v1(KEY_A, "v1:auth")},
        )
        conn.execute(
            insert(_table(engine, "judges")).values(
                id=1, owner_id=1, name="j", provider="openai", model="m",
                base_url="https://bob:pa%40ss@llm.example.com/v1",
                api_key_sealed=_v1(KEY_A, "sk-old"),
                headers={"X-Org": _v1(KEY_A, "org"), "authorization": "Bearer stale"},
                temperature=0, max_output_tokens=1, requests_per_minute=1,
                tokens_per_minute=0, max_concurrency=1, timeout_s=1, created_at=now,
            )
        )  # fmt: skip
        conn.execute(
            insert(_table(engine, "webhooks")).values(
                id=1, owner_id=1, name="w", url="https://hook:pw@hooks.example.com/in",
                secret=_v1(KEY_A, "hook-secret"), team_ids=[], created_at=now,
            )
        )  # fmt: skip
    command.upgrade(config, "0020_secrets")
    ring = Keyring((KEY_A,))
    with engine.connect() as conn:
        endpoint = conn.execute(text("SELECT basic_auth FROM search_endpoints WHERE id = 2")).one()
        judge = conn.execute(text("SELECT base_url, api_key_sealed, headers FROM judges")).one()
        hook = conn.execute(text("SELECT url, secret, basic_auth FROM webhooks")).one()
    assert endpoint[0].startswith(PREFIX)
    assert ring.unseal(endpoint[0], place=Place("search_endpoints", "basic_auth", 2)) == "v1:auth"
    assert _raw(empty_db_url)[0][1].startswith(PREFIX)  # type: ignore[union-attr]
    base_url, api_key, headers = judge
    headers = json.loads(headers) if isinstance(headers, str) else headers
    assert base_url == "https://llm.example.com/v1" and "pa" not in base_url
    assert ring.unseal(api_key, place=Place("judges", "api_key_sealed", 1)) == "sk-old"
    assert sorted(headers) == ["Authorization", "X-Org"]  # the URL's won over the header
    opened = {k: ring.unseal(v, place=Place("judges", "headers", 1, k)) for k, v in headers.items()}
    assert opened == {
        "Authorization": "Basic " + base64.b64encode(b"bob:pa@ss").decode(),
        "X-Org": "org",
    }
    url, secret, auth = hook
    assert url == "https://hooks.example.com/in"
    assert ring.unseal(secret, place=Place("webhooks", "secret", 1)) == "hook-secret"
    assert (
        auth.startswith(PREFIX)
        and ring.unseal(auth, place=Place("webhooks", "basic_auth", 1)) == "hook:pw"
    )

    command.downgrade(config, "0019")  # unbound sealed:v1: values again, credentials back
    with engine.connect() as conn:
        hook = conn.execute(text("SELECT url, secret FROM webhooks")).one()
        key = conn.execute(text("SELECT api_key_sealed FROM judges")).scalar_one()
    engine.dispose()
    assert hook[0] == "https://hook:pw@hooks.example.com/in"
    assert (
        hook[1].startswith(PREFIX_V1)
        and Fernet(KEY_A.encode()).decrypt(hook[1][10:].encode()) == b"hook-secret"
    )
    assert key.startswith(PREFIX_V1)

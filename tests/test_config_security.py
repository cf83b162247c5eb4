"""Security settings from the environment, and links built from the base URL."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.fixtures.outbound import SUITE_HOSTS


def test_https_base_url_turns_secure_cookies_on() -> None:
    settings = Settings.from_env({"RELEVO_BASE_URL": "https://relevo.example.com/"})
    assert settings.https_only_cookies is True
    assert settings.base_url == "https://relevo.example.com"
    assert Settings.from_env({}).https_only_cookies is False
    off = Settings.from_env({"RELEVO_BASE_URL": "https://x.example", "RELEVO_HTTPS_ONLY": "0"})
    assert off.https_only_cookies is False


def test_limits_and_engine_policy_from_env() -> None:
    settings = Settings.from_env(
        {
            "RELEVO_MAX_BODY_MB": "3",
            "RELEVO_ALLOWED_ENGINE_HOSTS": "*.search.internal, 10.0.0.0/8,",
            "RELEVO_BLOCK_PRIVATE_ADDRESSES": "true",
        }
    )
    assert settings.max_body_bytes == 3 * 1024 * 1024
    assert settings.allowed_engine_hosts == ("*.search.internal", "10.0.0.0/8")
    assert settings.block_private_addresses is True


def test_redirects_use_the_base_url_not_the_host_header(tmp_path: Path) -> None:
    settings = Settings(
        trusted_engine_hosts=SUITE_HOSTS,
        data_dir=tmp_path,
        database_url=f"sqlite:///{tmp_path / 'r.db'}",
        secret_key="k",
        base_url="https://relevo.example.com",
        https_only_cookies=True,
    )
    with TestClient(create_app(settings), base_url="https://relevo.example.com") as client:
        answer = client.get("/account", headers={"Host": "evil.example"}, follow_redirects=False)
        assert answer.status_code == 303
        assert answer.headers["location"].startswith("https://relevo.example.com/login")
        cookie = client.get("/login").headers["set-cookie"].lower()
        assert "secure" in cookie


def test_docs_are_served_from_local_files(client: TestClient) -> None:
    from bs4 import BeautifulSoup

    answer = client.get("/docs")
    assert answer.status_code == 200
    page = BeautifulSoup(answer.text, "html.parser")
    scripts = [str(s.get("src", "")) for s in page.select("script")]
    assert scripts and all(
        src.startswith(("http://testserver/static/", "/static/")) for src in scripts
    )
    assert all(not s.string for s in page.select("script"))
    for src in scripts:
        assert client.get(src).status_code == 200
    css = page.select_one("link[rel=stylesheet]")
    assert css is not None and client.get(str(css["href"])).status_code == 200
    assert "script-src 'self'" in answer.headers["content-security-policy"]

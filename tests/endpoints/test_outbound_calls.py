"""Outbound calls over the API and the forms: the default policy, DNS rebinding, bad URLs.

The suite allows loopback (tests/fixtures/outbound.py); these tests install Relevo's default
policy (loopback, private and link-local addresses refused) where they say so.
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.outbound.policy import IPAddress, current_policy, install_policy, policy_of
from tests.fixtures.users import ApiUser
from tests.support.api import make_endpoint
from tests.support.pages import login, one, soup
from tests.support.recording_engine import RecordingEngine, recording_engine

SETTING = "RELEVO_ALLOWED_ENGINE_HOSTS"


@pytest.fixture
def engine() -> Iterator[RecordingEngine]:
    with recording_engine() as running:
        yield running


@pytest.fixture
def defaults() -> Iterator[None]:
    """Run the test under the policy of the default settings (private addresses blocked)."""
    previous = current_policy()
    install_policy(policy_of(Settings()))
    yield
    install_policy(previous)


def _judge(url: str) -> dict[str, Any]:
    return {"name": "j", "provider": "openai", "base_url": url, "model": "m"}


def test_with_the_default_settings_try_and_test_do_not_reach_loopback(
    api: ApiUser, engine: RecordingEngine, request: pytest.FixtureRequest
) -> None:
    endpoint = make_endpoint(api, engine.index_url)  # made while the suite allows loopback
    request.getfixturevalue("defaults")
    tried = api.post(f"/api/v1/search-endpoints/{endpoint['id']}/try", json={})
    assert tried.status_code == 200
    body = tried.json()
    assert (body["status"], body["raw"], body["docs"]) == (None, "", [])
    where = engine.index_url.rsplit("/", 1)[0]
    assert body["error"] == (
        f"calling {where}/movies is not allowed on this server: add its host to {SETTING}"
    )
    tested = api.post(f"/api/v1/search-endpoints/{endpoint['id']}/test", json={}).json()
    assert tested["ok"] is False and SETTING in tested["message"]
    assert engine.seen == []
    created = api.post(
        "/api/v1/search-endpoints",
        json={"name": "x", "engine": "opensearch", "url": engine.index_url},
    )
    assert created.status_code == 422
    assert f"add its host to {SETTING}" in created.text


def _rebinding(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the policy's resolver answer a public address, then loopback, in turn."""
    public, loopback = ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("127.0.0.1")
    answers = itertools.cycle([[public], [loopback]])
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[IPAddress]:
        asked.append(host)
        return next(answers)

    monkeypatch.setattr("app.outbound.policy.resolve_host", resolver)
    return asked


@pytest.mark.parametrize("route", ["try", "test"])
def test_a_name_rebound_to_loopback_after_the_check_is_not_reached(
    api: ApiUser,
    engine: RecordingEngine,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    route: str,
) -> None:
    # "localhost" reaches the engine through the system's resolver: a client that resolved
    # the name again when connecting, instead of using the checked addresses, would get there.
    url = engine.index_url.replace("127.0.0.1", "localhost")
    endpoint = make_endpoint(api, url)
    request.getfixturevalue("defaults")
    asked = _rebinding(monkeypatch)
    answer = api.post(f"/api/v1/search-endpoints/{endpoint['id']}/{route}", json={}).json()
    message = answer["error"] if route == "try" else answer["message"]
    assert "is not allowed on this server" in message and SETTING in message
    assert asked == ["localhost", "localhost"]  # checked (public), then connecting (loopback)
    assert engine.seen == []


BAD_URLS: list[tuple[str, str]] = [
    ("http://[::1", "That is not a valid URL."),
    ("http://es.example.com:99999/x", "The URL's port must be a number from 1 to 65535."),
    ("http://%zz", "The URL's host is not a valid host name or address."),
    ("http://xn--:1", "That is not a valid URL."),
    ("http://169.254.169.254/latest", f"add its host to {SETTING}"),
    ("http://10.0.0.1:9200/x", f"add its host to {SETTING}"),
]


def _says(response: Any, message: str) -> None:
    assert response.status_code == 422, response.text
    text = soup(response).get_text() if "html" in response.headers["content-type"] else ""
    assert message in (text or response.text)


@pytest.mark.parametrize(("url", "message"), BAD_URLS)
def test_bad_and_refused_urls_are_422_at_creation_and_on_update(
    api: ApiUser, defaults: None, url: str, message: str
) -> None:
    endpoint_body = {"name": "e", "engine": "opensearch", "url": url}
    _says(api.post("/api/v1/search-endpoints", json=endpoint_body), message)
    _says(api.post("/api/v1/judges", json=_judge(url)), message)
    _says(api.post("/api/v1/webhooks", json={"name": "w", "url": url}), message)

    endpoint = make_endpoint(api, "https://es.example.com/movies")
    judge = api.post("/api/v1/judges", json=_judge("https://api.example.com/v1")).json()
    hook = api.post("/api/v1/webhooks", json={"name": "w", "url": "https://h.example.com/x"})
    hook_id = hook.json()["id"]
    _says(api.patch(f"/api/v1/search-endpoints/{endpoint['id']}", json={"url": url}), message)
    _says(api.patch(f"/api/v1/judges/{judge['id']}", json={"base_url": url}), message)
    _says(api.patch(f"/api/v1/webhooks/{hook_id}", json={"url": url}), message)
    # Nothing was changed.
    assert api.get(f"/api/v1/search-endpoints/{endpoint['id']}").json()["url"] == (
        "https://es.example.com/movies"
    )
    assert api.get(f"/api/v1/judges/{judge['id']}").json()["base_url"] == (
        "https://api.example.com/v1"
    )
    assert api.get(f"/api/v1/webhooks/{hook_id}").json()["url"] == "https://h.example.com/x"


def _endpoint_form(token: str, url: str) -> dict[str, str]:
    return {
        "csrf_token": token,
        "name": "e",
        "engine": "opensearch",
        "url": url,
        "method": "GET",
        "headers": "",
        "basic_auth": "",
        "timeout_s": "5",
        "requests_per_minute": "0",
        "max_concurrency": "4",
        "mapper_code": "",
    }


@pytest.mark.parametrize(("url", "message"), BAD_URLS)
def test_bad_and_refused_urls_are_422_in_the_forms(
    api: ApiUser, client: TestClient, defaults: None, url: str, message: str
) -> None:
    token = login(client)
    created = client.post("/endpoints", data=_endpoint_form(token, url))
    _says(created, message)
    endpoint = make_endpoint(api, "https://es.example.com/movies")
    updated = client.post(f"/endpoints/{endpoint['id']}", data=_endpoint_form(token, url))
    _says(updated, message)

    judge_form: Callable[[str], dict[str, str]] = lambda u: {  # noqa: E731
        "csrf_token": token,
        **_judge(u),
    }
    created = client.post("/judges", data=judge_form(url))
    _says(created, message)
    assert message in one(soup(created), "#error-base_url").get_text()
    judge = api.post("/api/v1/judges", json=_judge("https://api.example.com/v1")).json()
    updated = client.post(f"/judges/{judge['id']}", data=judge_form(url))
    _says(updated, message)

"""URLs checked when they are saved: unusable ones, and those the policy refuses already."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.outbound.destinations import url_problem
from app.outbound.policy import OutboundPolicy, current_policy, install_policy

REFUSED = "is not allowed on this server: add its host to RELEVO_ALLOWED_ENGINE_HOSTS."


@pytest.fixture
def policy() -> Iterator[None]:
    """Install the default policy (private addresses blocked) for one test."""
    previous = current_policy()
    install_policy(OutboundPolicy())
    yield
    install_policy(previous)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1", "That is not a valid URL."),
        ("http://x.com:80a/", "That is not a valid URL."),
        ("http://xn--:1", "That is not a valid URL."),
        ("http://h\x00.com/", "That is not a valid URL."),
        ("http://es.example.com:99999/", "The URL's port must be a number from 1 to 65535."),
        ("http://[2001:db8::1]:65536/", "The URL's port must be a number from 1 to 65535."),
        ("http://es.example.com:0/", "The URL's port must be a number from 1 to 65535."),
        ("http://%zz", "The URL's host is not a valid host name or address."),
        ("http://a b.com/", "The URL's host is not a valid host name or address."),
        ("http://.../", "The URL's host is not a valid host name or address."),
        ("http:///x", "The URL must be an http:// or https:// address with a host."),
        ("ftp://es.example.com/", "The URL must be an http:// or https:// address with a host."),
        ("es.example.com/x", "The URL must be an http:// or https:// address with a host."),
    ],
)
def test_unusable_urls_say_why(url: str, problem: str, policy: None) -> None:
    assert url_problem(url) == problem


@pytest.mark.parametrize(
    "url",
    [
        "https://es.example.com:9243/movies",
        "http://solr:8983/solr/movies/select",  # a name: told when it is called
        "http://search_engine:9200/x",  # a container's name
        "https://ñandú.example/x",
        "http://[2606:4700:4700::1111]/",
        "http://8.8.8.8:9200/",
        "http://bob:s3cret@es.example.com/",
    ],
)
def test_usable_urls_pass(url: str, policy: None) -> None:
    assert url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("http://169.254.169.254/latest/meta-data/", "http://169.254.169.254"),
        ("http://10.0.0.1:9200/movies", "http://10.0.0.1:9200"),
        ("http://[::1]:8000/openapi.json", "http://[::1]:8000"),
        ("http://[::ffff:127.0.0.1]/", "http://[::ffff:127.0.0.1]"),
        ("http://localhost:8000/", "http://localhost:8000"),
        ("http://api.localhost/", "http://api.localhost"),
        # Numeric forms the resolver reads as 127.0.0.1, told without a lookup.
        ("http://2130706433/", "http://2130706433"),
        ("http://127.1:8000/", "http://127.1:8000"),
        ("http://0x7f.1/", "http://0x7f.1"),
        ("http://alice:pw@10.1.2.3/", "http://10.1.2.3"),
    ],
)
def test_addresses_the_policy_refuses_are_told_at_once(url: str, where: str, policy: None) -> None:
    assert url_problem(url) == f"Calling {where} {REFUSED}"


def test_allowed_and_unblocked_addresses_pass() -> None:
    previous = current_policy()
    try:
        install_policy(OutboundPolicy(allowed_hosts=("10.0.0.0/8", "localhost:8983")))
        assert url_problem("http://10.1.2.3:9200/") is None
        assert url_problem("http://localhost:8983/solr") is None
        assert url_problem("http://solr.internal/") is None  # may resolve into 10.0.0.0/8
        assert url_problem("http://127.0.0.1/") == f"Calling http://127.0.0.1 {REFUSED}"
        install_policy(OutboundPolicy(allowed_hosts=("*.search.example.com",)))
        assert url_problem("https://es.search.example.com/") is None
        # Only names are listed: a name that is not one of them is refused without DNS.
        assert url_problem("https://evil.example.com/") == (
            f"Calling https://evil.example.com {REFUSED}"
        )
        install_policy(OutboundPolicy(block_private=False))
        assert url_problem("http://169.254.169.254/") is None
        assert url_problem("http://[::1") == "That is not a valid URL."
    finally:
        install_policy(previous)

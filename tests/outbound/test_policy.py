"""The outbound policy: safe by default, IPv6 forms of private IPv4 addresses, named hosts."""

from __future__ import annotations

import asyncio
import ipaddress

import httpx
import pytest

from app.config import Settings
from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, check_destination, is_private, policy_of


def _check(policy: OutboundPolicy, url: str) -> None:
    asyncio.run(check_destination(policy, httpx.URL(url), url))


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::7f00:1",  # NAT64 (well-known prefix) of 127.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b:1::808:808",  # NAT64 local-use prefix, whatever it carries
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::",  # 6to4 of 169.254.169.254
        "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
        "::127.0.0.1",  # IPv4-compatible
        "::10.0.0.1",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::ffff:169.254.169.254",
        "::ffff:0:127.0.0.1",  # IPv4-translated (SIIT)
        "::ffff:0:10.0.0.1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "fec0::1",  # site-local
        "fc00::1",
        "fe80::1",
        "::1",
        "::",
        "ff02::1",
        "127.0.0.1",
        "10.0.0.1",
        "169.254.169.254",
        "100.64.0.1",  # shared address space (carrier-grade NAT)
        "0.0.0.0",
        "240.0.0.1",  # reserved
        "224.0.0.1",
    ],
)
def test_private_loopback_link_local_and_reserved_forms_are_private(address: str) -> None:
    assert is_private(ipaddress.ip_address(address)) is True


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "93.184.216.34",
        "2606:4700:4700::1111",
        "2001:4860:4860::8888",
        "64:ff9b::808:808",  # NAT64 of a public address: how IPv6-only networks reach it
        "2002:808:808::1",  # 6to4 of a public address
        "::ffff:8.8.8.8",
        "::ffff:0:8.8.8.8",
    ],
)
def test_public_addresses_are_not_private(address: str) -> None:
    assert is_private(ipaddress.ip_address(address)) is False


@pytest.mark.parametrize(
    "url",
    [
        "http://[64:ff9b::7f00:1]:9200/",
        "http://[2002:7f00:1::1]/",
        "http://[::127.0.0.1]/",
        "http://[::ffff:0:127.0.0.1]/",
        "http://[fec0::1]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    ],
)
def test_ipv6_forms_of_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(Unreachable, match="not allowed"):
        _check(OutboundPolicy(), url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/openapi.json",
        "http://localhost:9200/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::1]/",
        "http://[fe80::1]/",
    ],
)
def test_the_default_policy_refuses_private_addresses_and_names_the_setting(url: str) -> None:
    with pytest.raises(Unreachable) as info:
        _check(OutboundPolicy(), url)
    assert str(info.value) == (
        f"calling {url} is not allowed on this server: add its host to RELEVO_ALLOWED_ENGINE_HOSTS"
    )


def test_private_blocking_is_on_unless_turned_off_explicitly() -> None:
    assert Settings().block_private_addresses is True
    assert Settings.from_env({}).block_private_addresses is True
    assert Settings.from_env({"RELEVO_BLOCK_PRIVATE_ADDRESSES": ""}).block_private_addresses
    for off in ("0", "false", "off", "no"):
        env = {"RELEVO_BLOCK_PRIVATE_ADDRESSES": off}
        assert Settings.from_env(env).block_private_addresses is False
    with pytest.raises(ValueError, match="RELEVO_BLOCK_PRIVATE_ADDRESSES must be 1"):
        Settings.from_env({"RELEVO_BLOCK_PRIVATE_ADDRESSES": "of"})
    assert policy_of(Settings()).block_private is True
    assert OutboundPolicy().block_private is True


def test_a_host_listed_by_name_is_allowed_even_on_a_private_address() -> None:
    policy = policy_of(Settings.from_env({"RELEVO_ALLOWED_ENGINE_HOSTS": "localhost:9200"}))
    _check(policy, "http://localhost:9200/movies")
    for url in ("http://localhost:9201/", "http://127.0.0.1:9200/", "http://8.8.8.8/"):
        with pytest.raises(Unreachable, match="not allowed"):
            _check(policy, url)


def test_trusted_hosts_add_to_the_allowed_ones_without_limiting_others() -> None:
    policy = OutboundPolicy(trusted=("127.0.0.1:9250",))
    _check(policy, "http://127.0.0.1:9250/movies")
    _check(policy, "http://8.8.8.8/")  # public addresses stay allowed
    for url in ("http://127.0.0.1:9251/", "http://10.0.0.1:9250/"):
        with pytest.raises(Unreachable, match="not allowed"):
            _check(policy, url)

"""Which engine addresses Relevo may call, and how big an answer it will read.

The policy is checked before every request, retries included, on the addresses the host
name resolves to: a name that resolves to a private address is refused when private
addresses are blocked, whatever the name looks like. The process-wide policy is installed
by ``create_app`` from the settings; clients built without one use it.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import socket
from dataclasses import dataclass
from functools import cached_property

import httpx

from app.search.errors import EngineUnavailable

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "OutboundPolicy",
    "allows",
    "check_destination",
    "current_policy",
    "install_policy",
    "resolve_host",
]

DEFAULT_MAX_RESPONSE_BYTES = 20 * 1024 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class OutboundPolicy:
    """Allowed engine hosts (empty: any), private-address blocking and the answer size cap."""

    allowed_hosts: tuple[str, ...] = ()
    block_private: bool = False
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    @cached_property
    def networks(self) -> tuple[IPNetwork, ...]:
        """The allowed hosts given as addresses or networks (``10.0.0.0/8``), parsed once."""
        return tuple(n for n in map(_network, self.allowed_hosts) if n is not None)

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The allowed hosts given as names or name patterns (``*.search.example.com:9200``)."""
        return tuple(p for p in self.allowed_hosts if _network(p) is None)

    @property
    def needs_resolution(self) -> bool:
        """Return whether a request must resolve its host before it is sent."""
        return self.block_private or bool(self.networks)


_installed = OutboundPolicy()


def install_policy(policy: OutboundPolicy) -> None:
    """Make ``policy`` the one clients use when they are given none."""
    global _installed
    _installed = policy


def current_policy() -> OutboundPolicy:
    """Return the installed process-wide policy."""
    return _installed


def _network(pattern: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(pattern, strict=False)
    except ValueError:
        return None


def _is_private(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def _host_matches(pattern: str, host: str, port: int) -> bool:
    name, sep, want_port = pattern.lower().rpartition(":")
    if sep and want_port.isdigit() and "]" not in want_port:
        return int(want_port) == port and fnmatch.fnmatchcase(host, name)
    return fnmatch.fnmatchcase(host, pattern.lower())


async def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Return the addresses ``host`` resolves to (none when it does not resolve)."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def _listed(policy: OutboundPolicy, host: str, port: int, addresses: list[IPAddress]) -> bool:
    """Return whether the allowed hosts (any when none are set) admit this host or address."""
    if not policy.allowed_hosts:
        return True
    return any(_host_matches(p, host, port) for p in policy.names) or (
        bool(addresses) and all(any(a in n for n in policy.networks) for a in addresses)
    )


def _private_refused(policy: OutboundPolicy, addresses: list[IPAddress]) -> bool:
    """Return whether private-address blocking refuses any of these addresses."""
    if not policy.block_private:
        return False
    # An address the operator allowed by network is exempt: that is how a shared server
    # reaches its own internal engines while refusing every other private one.
    return any(_is_private(a) and not any(a in n for n in policy.networks) for a in addresses)


def allows(policy: OutboundPolicy, host: str, port: int, addresses: list[IPAddress]) -> bool:
    """Return whether the policy lets Relevo call ``host:port`` at these resolved addresses."""
    return _listed(policy, host, port, addresses) and not _private_refused(policy, addresses)


async def check_destination(policy: OutboundPolicy, url: httpx.URL, where: str) -> None:
    """Raise EngineUnavailable when the policy forbids calling ``url``.

    The connection itself checks again the addresses it connects to
    (``app.search.network``), so a name that resolves elsewhere by then is refused too.
    """
    if not policy.allowed_hosts and not policy.block_private:
        return
    host = url.host.lower()
    port = url.port or (443 if url.scheme == "https" else 80)
    refused = EngineUnavailable(f"calling {where} is not allowed on this server")
    addresses = await resolve_host(host, port) if policy.needs_resolution else []
    if not _listed(policy, host, port, addresses):
        raise refused
    if policy.block_private and not addresses:
        raise EngineUnavailable(f"cannot connect to {where}")
    if _private_refused(policy, addresses):
        raise refused

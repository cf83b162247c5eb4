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

import httpx

from app.search.errors import EngineUnavailable

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "OutboundPolicy",
    "check_destination",
    "current_policy",
    "install_policy",
]

DEFAULT_MAX_RESPONSE_BYTES = 20 * 1024 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class OutboundPolicy:
    """Allowed engine hosts (empty: any), private-address blocking and the answer size cap."""

    allowed_hosts: tuple[str, ...] = ()
    block_private: bool = False
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    @property
    def needs_resolution(self) -> bool:
        """Return whether a request must resolve its host before it is sent."""
        return self.block_private or any(_is_network(p) for p in self.allowed_hosts)


_installed = OutboundPolicy()


def install_policy(policy: OutboundPolicy) -> None:
    """Make ``policy`` the one clients use when they are given none."""
    global _installed
    _installed = policy


def current_policy() -> OutboundPolicy:
    """Return the installed process-wide policy."""
    return _installed


def _is_network(pattern: str) -> bool:
    try:
        ipaddress.ip_network(pattern, strict=False)
    except ValueError:
        return False
    return True


def _is_private(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def _host_matches(pattern: str, host: str, port: int) -> bool:
    name, sep, want_port = pattern.lower().rpartition(":")
    if sep and want_port.isdigit() and "]" not in want_port:
        return int(want_port) == port and fnmatch.fnmatchcase(host, name)
    return fnmatch.fnmatchcase(host, pattern.lower())


def _address_allowed(pattern: str, address: IPAddress) -> bool:
    return address in ipaddress.ip_network(pattern, strict=False)


async def _resolve(host: str, port: int) -> list[IPAddress]:
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


async def check_destination(policy: OutboundPolicy, url: httpx.URL, where: str) -> None:
    """Raise EngineUnavailable when the policy forbids calling ``url``."""
    if not policy.allowed_hosts and not policy.block_private:
        return
    host = url.host.lower()
    port = url.port or (443 if url.scheme == "https" else 80)
    refused = EngineUnavailable(f"calling {where} is not allowed on this server")
    addresses = await _resolve(host, port) if policy.needs_resolution else []
    networks = [p for p in policy.allowed_hosts if _is_network(p)]
    if policy.allowed_hosts:
        names = [p for p in policy.allowed_hosts if not _is_network(p)]
        by_name = any(_host_matches(p, host, port) for p in names)
        by_address = bool(addresses) and all(
            any(_address_allowed(n, a) for n in networks) for a in addresses
        )
        if not (by_name or by_address):
            raise refused
    if policy.block_private:
        if not addresses:
            raise EngineUnavailable(f"cannot connect to {where}")
        # An address the operator allowed by network is exempt: that is how a shared
        # server reaches its own internal engines while refusing every other private one.
        if any(
            _is_private(a) and not any(_address_allowed(n, a) for n in networks) for a in addresses
        ):
            raise refused

"""Which addresses Relevo may call (engines, judges, webhooks), and how big an answer it reads.

The policy is checked before every request, retries included, on the addresses the host
name resolves to: a name that resolves to a private address is refused when private
addresses are blocked (the default), whatever the name looks like, unless the operator
named that host or its network in ``RELEVO_ALLOWED_ENGINE_HOSTS``. IPv6 forms of IPv4
addresses (mapped, compatible, NAT64, 6to4) are judged by the IPv4 address they carry.
The process-wide policy is installed by ``create_app`` from the settings; clients built
without one use it, and before any is installed the default blocks private addresses.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import socket
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import httpx

from app.outbound.errors import Unreachable

if TYPE_CHECKING:
    from app.config import Settings

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "OutboundPolicy",
    "allows",
    "check_destination",
    "current_policy",
    "install_policy",
    "is_private",
    "policy_of",
    "refusal_message",
    "resolve_host",
]

DEFAULT_MAX_RESPONSE_BYTES = 20 * 1024 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


ALLOWED_HOSTS_SETTING = "RELEVO_ALLOWED_ENGINE_HOSTS"

# NAT64's local-use prefix (RFC 8215): where its IPv4 address sits depends on the local
# setup, and it never names a host on the internet.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
# The well-known NAT64 prefix (RFC 6052), the IPv4-compatible (::a.b.c.d, deprecated) and
# IPv4-translated (::ffff:0:a.b.c.d, SIIT) ranges: the IPv4 address is the last 32 bits.
_IPV4_IN_LAST_32_BITS = tuple(
    ipaddress.IPv6Network(n) for n in ("64:ff9b::/96", "::/96", "::ffff:0:0:0/96")
)


@dataclass(frozen=True)
class OutboundPolicy:
    """Allowed hosts (empty: any), private-address blocking and the answer size cap.

    ``trusted`` hosts are allowed too, private or not, without limiting the others: code
    that starts its own engine (the embedded demo) names it there.
    """

    allowed_hosts: tuple[str, ...] = ()
    block_private: bool = True
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    trusted: tuple[str, ...] = ()

    @cached_property
    def networks(self) -> tuple[IPNetwork, ...]:
        """The allowed and trusted hosts given as addresses or networks (``10.0.0.0/8``)."""
        return tuple(n for n in map(_network, self.allowed_hosts + self.trusted) if n is not None)

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The allowed and trusted hosts given as names or patterns (``*.example.com:9200``)."""
        return tuple(p for p in self.allowed_hosts + self.trusted if _network(p) is None)

    def named(self, host: str, port: int) -> bool:
        """Return whether the host (with this port) is allowed or trusted by name.

        A host named by the operator is called whatever it resolves to, private addresses
        included: that is how a server reaches its own engines and model servers.
        """
        return any(_host_matches(p, host, port) for p in self.names)

    @property
    def needs_resolution(self) -> bool:
        """Return whether a request must resolve its host before it is sent."""
        return self.block_private or bool(self.networks)


_installed = OutboundPolicy()


def install_policy(policy: OutboundPolicy) -> OutboundPolicy:
    """Make ``policy`` the one clients use when they are given none; return the previous."""
    global _installed
    previous, _installed = _installed, policy
    return previous


def current_policy() -> OutboundPolicy:
    """Return the installed process-wide policy."""
    return _installed


def policy_of(settings: Settings) -> OutboundPolicy:
    """Return the outbound policy the settings describe."""
    return OutboundPolicy(
        allowed_hosts=settings.allowed_engine_hosts,
        block_private=settings.block_private_addresses,
        max_response_bytes=settings.max_engine_response_bytes,
        trusted=settings.trusted_engine_hosts,
    )


def _network(pattern: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(pattern, strict=False)
    except ValueError:
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address an IPv6 address carries (mapped, 6to4, NAT64...), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in n for n in _IPV4_IN_LAST_32_BITS):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_private(address: IPAddress) -> bool:
    """Return whether the address is not a public unicast one (loopback, private,
    link-local, shared, reserved, multicast...), IPv6 forms of IPv4 addresses included."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_private(embedded)
        # Teredo tunnels to an IPv4 host it hides; site-local is private but for Python.
        if address.teredo is not None or address.is_site_local or address in _LOCAL_NAT64:
            return True
    return not address.is_global or address.is_multicast or address.is_reserved


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


def _listed(policy: OutboundPolicy, addresses: list[IPAddress]) -> bool:
    """Return whether the allowed hosts (any when none are set) admit these addresses."""
    if not policy.allowed_hosts:
        return True
    return bool(addresses) and all(any(a in n for n in policy.networks) for a in addresses)


def _private_refused(policy: OutboundPolicy, addresses: list[IPAddress]) -> bool:
    """Return whether private-address blocking refuses any of these addresses."""
    if not policy.block_private:
        return False
    # An address the operator allowed by network is exempt: that is how a shared server
    # reaches its own internal engines while refusing every other private one.
    return any(is_private(a) and not any(a in n for n in policy.networks) for a in addresses)


def allows(policy: OutboundPolicy, host: str, port: int, addresses: list[IPAddress]) -> bool:
    """Return whether the policy lets Relevo call ``host:port`` at these resolved addresses."""
    if policy.named(host, port):
        return True
    return _listed(policy, addresses) and not _private_refused(policy, addresses)


def refusal_message(where: str) -> str:
    """Return what a refused call says: what was refused and the setting that allows it."""
    return f"calling {where} is not allowed on this server: add its host to {ALLOWED_HOSTS_SETTING}"


async def check_destination(policy: OutboundPolicy, url: httpx.URL, where: str) -> None:
    """Raise Unreachable when the policy forbids calling ``url``.

    The connection itself checks again the addresses it connects to
    (``app.outbound.network``), so a name that resolves elsewhere by then is refused too.
    """
    if not policy.allowed_hosts and not policy.block_private:
        return
    try:
        host = url.host.lower()
    except ValueError:  # a stored host IDNA cannot decode (``xn--``)
        raise Unreachable(f"cannot connect to {where}: its host is not valid") from None
    port = url.port or (443 if url.scheme == "https" else 80)
    if policy.named(host, port):
        return
    refused = Unreachable(refusal_message(where))
    addresses = await resolve_host(host, port) if policy.needs_resolution else []
    if not _listed(policy, addresses):
        raise refused
    if policy.block_private and not addresses:
        raise Unreachable(f"cannot connect to {where}")
    if _private_refused(policy, addresses):
        raise refused

"""Whether a URL given for an engine, a judge or a webhook can be called, told when it is saved.

Its form is checked (http or https, a host that can be looked up, a port from 1 to 65535),
then the outbound policy, as far as it can be told without asking DNS: an address written
as such (``http://10.0.0.1``, ``http://[::1]``, ``http://2130706433``) or ``localhost``,
and names when the allowed hosts list only names. Creation never waits for a DNS server
that may be down: a name is accepted, and checked on its resolved addresses at every call.
"""

from __future__ import annotations

import ipaddress
import re
import socket

import httpx

from app.outbound import policy as outbound

__all__ = ["url_problem"]

# A host name as DNS and the resolver take it (IDNA already applied): letters, digits,
# hyphens and, for container and service names, underscores; labels of up to 63.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$", re.IGNORECASE)
_LOOPBACK = [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]


def _parse(url: str) -> httpx.URL | str:
    """Return the parsed URL, or why it cannot be one."""
    try:
        parsed = httpx.URL(url)
        parsed.host  # noqa: B018 (decoding an IDNA host can fail: ``http://xn--``)
    except (httpx.InvalidURL, ValueError):  # IDNA errors are ValueErrors (UnicodeError)
        return "That is not a valid URL."
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return "The URL must be an http:// or https:// address with a host."
    if parsed.port is not None and not 0 < parsed.port < 65536:
        return "The URL's port must be a number from 1 to 65535."
    host = parsed.raw_host.decode("ascii", "replace")
    if ":" in host:  # an IPv6 address, given in brackets
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return "The URL's host is not a valid IPv6 address."
    elif not _HOST_NAME.match(host):
        return "The URL's host is not a valid host name or address."
    return parsed


def _addresses_known_now(host: str, port: int) -> list[outbound.IPAddress] | None:
    """Return the addresses a host stands for without asking DNS, or None for a name."""
    if host == "localhost" or host.endswith(".localhost"):  # always loopback (RFC 6761)
        return _LOOPBACK
    try:
        # Numeric forms only (``127.1``, ``0x7f.1``, ``2130706433`` are loopback too, as
        # the resolver reads them): no lookup is made.
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError):
        return None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def url_problem(url: str) -> str | None:
    """Return why Relevo could not call ``url`` (its form, or the outbound policy as far as
    it can be told without DNS), or None."""
    parsed = _parse(url.strip())
    if isinstance(parsed, str):
        return parsed
    policy = outbound.current_policy()
    if not policy.allowed_hosts and not policy.block_private:
        return None
    host = parsed.host.lower()
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    if policy.named(host, port):
        return None
    addresses = _addresses_known_now(host, port)
    if addresses is None:
        if policy.allowed_hosts and not policy.networks:  # only names are allowed: not this one
            addresses = []
        else:
            return None  # told when it is called, on the addresses the name resolves to
    if outbound.allows(policy, host, port, addresses):
        return None
    where = f"{parsed.scheme}://{parsed.netloc.decode('ascii', 'replace')}"
    message = outbound.refusal_message(where)
    return message[0].upper() + message[1:] + "."

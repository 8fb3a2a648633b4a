"""The private-network guard: a destination that resolves to a loopback, private, link-local (or otherwise
non-public) address is refused unless `BEACON_ALLOW_PRIVATE_DESTINATIONS=true` (or `beacon serve --dev`).

It runs when a notifier is created or changed and again before every send (DNS may have changed since, and a
name can be made to point anywhere). At send time the connection goes to the address that was checked, so a
second DNS answer cannot slip past the check.

An address is judged by where traffic to it ends: an IPv6 address that carries an IPv4 one (mapped,
compatible, translated, NAT64, 6to4, Teredo) is refused when that IPv4 address is not public, though Python's
`is_global` calls some of those forms public. A host written as a number in the forms `inet_aton` reads
(`2130706433`, `0x7f.1`, `017700000001`, `127.1`) is an address, checked as such whatever the resolver does.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

Resolve = Callable[[str, int], Awaitable[list[str]]]
RESOLVE_TIMEOUT_SECONDS = 3.0


class DestinationRefused(Exception):
    """The destination is on a network notifiers may not reach. The message names host and address only."""


class Unresolvable(Exception):
    """The host name does not resolve (now)."""


async def system_resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=RESOLVE_TIMEOUT_SECONDS
        )
    except (OSError, TimeoutError) as exc:
        raise Unresolvable(f"{host} does not resolve: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052: the IPv4 address in the last 32 bits
LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: local use, never global
COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible ::a.b.c.d
TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765 SIIT ::ffff:0:a.b.c.d
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses traffic to `ip` is carried to (empty for a plain IPv6 address)."""
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip in NAT64 or ip in COMPATIBLE or ip in TRANSLATED:
        return [low]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)  # (server, client)
    return []


def _is_global(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    # is_global is False for loopback, RFC 1918, link-local, CGNAT, documentation and reserved ranges.
    return ip.is_global and not ip.is_multicast


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv4Address):
        return _is_global(ip)
    if ip in LOCAL_NAT64:
        return False
    embedded = embedded_ipv4(ip)
    # A mapped address is the IPv4 address itself (is_global calls every ::ffff:a.b.c.d private).
    return (ip.ipv4_mapped is not None or _is_global(ip)) and all(_is_global(v4) for v4 in embedded)


def numeric_ipv4(host: str) -> str | None:
    """The IPv4 address `host` means when written as `inet_aton` (and the URL standard) read it: one to four
    dot-separated numbers, each decimal, octal (leading 0) or hexadecimal (0x), the last filling the rest."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # a trailing dot
    if not 1 <= len(parts) <= 4 or not all(_NUMBER.fullmatch(p) for p in parts):
        return None
    numbers = [int(p[2:] or "0", 16) if p[:2].lower() == "0x" else int(p, 8 if p[0] == "0" else 10) for p in parts]
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    return str(ipaddress.IPv4Address(sum(n << 8 * (3 - i) for i, n in enumerate(head)) + last))


def literal_address(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return numeric_ipv4(host)


def _refusal(host: str, address: str, *, literal: bool) -> str:
    if not literal:
        subject = f"{host} resolves to {address}, a"
    elif address != host.strip("[]"):
        subject = f"{host} is {address}, a"
    else:
        subject = f"{address} is a"
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    carried = embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None else []
    via = f" (it carries {', '.join(map(str, carried))})" if carried else ""
    return (
        f"{subject} loopback, private or link-local address{via}; such destinations are refused unless "
        "BEACON_ALLOW_PRIVATE_DESTINATIONS=true (or, on a development machine, `beacon serve --dev`)"
    )


@dataclass(frozen=True)
class DestinationGuard:
    allow_private: bool
    resolve: Resolve = system_resolve

    def with_resolver(self, resolve: Resolve) -> DestinationGuard:
        return replace(self, resolve=resolve)

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for `host`; raises DestinationRefused or Unresolvable."""
        literal = literal_address(host)
        found = [literal] if literal else await self.resolve(host, port)
        if not found:
            raise Unresolvable(f"{host} does not resolve")
        if not self.allow_private:
            for address in found:
                if not is_public(address):
                    # Any private answer refuses the name: a mixed answer is how rebinding attacks start.
                    raise DestinationRefused(_refusal(host, address, literal=bool(literal)))
        return found

    async def check_url(self, url: str) -> None:
        """At creation: refuse a private destination; a name that does not resolve yet is let through (the
        send-time check will run again)."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            await self.addresses(host, port)
        except Unresolvable:
            return

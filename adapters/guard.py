"""The private-network guard: a destination that resolves to a loopback, private, link-local (or otherwise
non-public) address is refused unless `BEACON_ALLOW_PRIVATE_DESTINATIONS=true`.

It runs when a notifier is created or changed and again before every send (DNS may have changed since, and a
name can be made to point anywhere). At send time the connection goes to the address that was checked, so a
second DNS answer cannot slip past the check.
"""

from __future__ import annotations

import asyncio
import ipaddress
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


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    # is_global is False for loopback, RFC 1918, link-local, CGNAT, documentation and reserved ranges.
    return ip.is_global and not ip.is_multicast


def literal_address(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


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
                    raise DestinationRefused(
                        f"{host} resolves to {address}, a loopback, private or link-local address; "
                        "such destinations are refused unless BEACON_ALLOW_PRIVATE_DESTINATIONS=true"
                        if not literal
                        else f"{address} is a loopback, private or link-local address; such destinations "
                        "are refused unless BEACON_ALLOW_PRIVATE_DESTINATIONS=true"
                    )
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

"""A pytest plugin (`-p tests.loopback_only` in pyproject.toml): the tests' network is this machine's loopback.

Every connection a test process opens to an address off this machine is refused at once, and the test during
which it happened fails, whatever the code under test made of the error (a sender turns it into a retry, a log line).
The tests' DNS (tests/offline_dns.py) hands out a real public address for the private-network guard to check; a
test that sent to it would leave the machine (or wait for a firewall's timeout) without this. Processes the tests
start (Prometheus, Alertmanager, Chromium) are their own: they are given loopback addresses only.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

_INET = (socket.AF_INET, socket.AF_INET6)
_refused: list[str] = []
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def on_this_machine(host: str) -> bool:
    """Whether a connection to `host` (an address, or `localhost`) stays on this machine."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") is not part of it
    except ValueError:
        return host == "localhost"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in _INET and not on_this_machine(str(address[0])):
        where = f"{address[0]}:{address[1]}"
        _refused.append(where)
        raise ConnectionRefusedError(f"the tests use no network beyond loopback: a connection to {where} refused")


def _loopback_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _connect(self, address)


def _loopback_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    # asyncio (and so aiohttp, httpx, asyncpg) connects through these methods of the socket it made.
    socket.socket.connect = _loopback_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _loopback_connect_ex  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _loopback_only() -> Iterator[None]:
    before = len(_refused)
    yield
    refused = _refused[before:]
    assert not refused, f"this test connected off the machine (refused): {', '.join(refused)}"

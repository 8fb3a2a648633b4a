"""The tests' own network fence (tests/loopback_only.py): a test that reaches off the machine is caught."""

from __future__ import annotations

import asyncio
import socket

import pytest

from tests import loopback_only
from tests.offline_dns import PUBLIC_ADDRESS


@pytest.mark.parametrize(
    ("host", "stays"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", True),
        ("localhost", True),
        (PUBLIC_ADDRESS, False),
        ("10.1.2.3", False),
        ("169.254.169.254", False),
        ("::ffff:93.184.215.14", False),
        ("public.example", False),
    ],
)
def test_only_loopback_counts_as_this_machine(host: str, stays: bool) -> None:
    assert loopback_only.on_this_machine(host) is stays


async def test_a_connection_off_the_machine_is_refused_at_once_and_recorded() -> None:
    before = len(loopback_only._refused)
    with pytest.raises(ConnectionRefusedError, match="no network beyond loopback"):
        await asyncio.wait_for(asyncio.open_connection(PUBLIC_ADDRESS, 443), timeout=1)
    assert loopback_only._refused[before:] == [f"{PUBLIC_ADDRESS}:443"]
    del loopback_only._refused[before:]  # this test meant to: the fence must not fail it


async def test_loopback_connections_go_through() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
    with socket.socket(socket.AF_UNIX) as unix:  # not an internet socket: not looked at
        assert unix.connect_ex("/nonexistent/beacon.sock") != 0

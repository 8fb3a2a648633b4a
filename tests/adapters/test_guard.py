"""The private-network guard reads addresses as the network does: IPv6 forms that carry an IPv4 address, and
IPv4 written as one number, in octal or in hexadecimal."""

from __future__ import annotations

import ipaddress

import pytest

from adapters import testing as kit
from adapters.chat_a import ChatA
from adapters.contract import AdapterSettings
from adapters.guard import DestinationGuard, is_public, literal_address
from adapters.http import HttpSender
from tests.offline_dns import PUBLIC_ADDRESS, offline_resolve

# Each carries a loopback, private or link-local IPv4 address, which is where traffic to it ends.
EMBEDDED_PRIVATE = [
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:0:7f00:1",  # IPv4-translated (SIIT)
    "64:ff9b::7f00:1",  # NAT64
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b:1::a00:1",  # local-use NAT64 prefix
    "2002:7f00:1::",  # 6to4
    "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
]
EMBEDDED_PUBLIC = ["64:ff9b::5db8:d70e", "2002:5db8:d70e::1", "::ffff:93.184.215.14", "2606:2800:220:1::1"]
NUMERIC_LOOPBACK = ["2130706433", "0x7f.1", "017700000001", "0177.0.0.1", "127.1", "0x7f000001", "127.0.0.1."]


@pytest.mark.parametrize("address", EMBEDDED_PRIVATE)
def test_an_embedded_private_ipv4_address_is_not_public(address):
    assert not is_public(address)


@pytest.mark.parametrize("address", EMBEDDED_PUBLIC)
def test_an_embedded_public_ipv4_address_stays_public(address):
    assert is_public(address)


@pytest.mark.parametrize("host", NUMERIC_LOOPBACK)
def test_a_numeric_host_is_the_address_it_means(host):
    assert literal_address(host) == "127.0.0.1"


def test_names_and_numbers_out_of_range_are_not_addresses():
    as_number = str(int(ipaddress.IPv4Address(PUBLIC_ADDRESS)))
    assert literal_address(as_number) == PUBLIC_ADDRESS
    for host in ("example.com", "1.2.3.4.5", "256.1.1.1", "08.1.1.1", "4294967296", "1e3", "0x1g"):
        assert literal_address(host) is None, host


async def test_a_numeric_host_is_sent_to_the_address_that_was_checked():
    # Allowed, the number goes to 127.0.0.1 (where the guard said it would), whatever the resolver knows of it.
    lenient = kit.AdapterContext(
        settings=AdapterSettings(),
        http=HttpSender(DestinationGuard(allow_private=True, resolve=offline_resolve)),
        message_id="dlv_x",
    )
    try:
        async with kit.LocalServer() as server:
            port = server.base_url.rsplit(":", 1)[1]
            for host in ("2130706433", "0x7f.1"):
                adapter = ChatA(ChatA.Config(url=f"http://{host}:{port}/x"), lenient)
                assert (await adapter.send(adapter.render(kit.sample_events()["test"]))).ok
            assert [r.headers["host"] for r in server.received] == [f"2130706433:{port}", f"0x7f.1:{port}"]
    finally:
        await lenient.http.aclose()

"""The private-network guard's address classification and its use of DNS answers."""

from __future__ import annotations

import pytest

from adapters.guard import DestinationGuard, DestinationRefused, Unresolvable, is_public


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("8.8.8.8", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("127.255.0.9", False),
        ("10.20.30.40", False),
        ("172.31.255.255", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("100.64.1.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1%eth0", False),
        ("fc00::5", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.215.14", True),
    ],
)
def test_is_public(address, public):
    assert is_public(address) is public


def _resolver(table):
    calls = []

    async def resolve(host, port):
        calls.append((host, port))
        if host not in table:
            raise Unresolvable(host)
        return table[host]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


async def test_names_are_resolved_and_any_private_answer_refuses():
    resolve = _resolver({"ok.test": ["93.184.215.14"], "mixed.test": ["93.184.215.14", "10.0.0.1"]})
    guard = DestinationGuard(allow_private=False, resolve=resolve)
    assert await guard.addresses("ok.test", 443) == ["93.184.215.14"]
    with pytest.raises(DestinationRefused, match=r"10\.0\.0\.1"):
        await guard.addresses("mixed.test", 443)
    with pytest.raises(Unresolvable):
        await guard.addresses("nothing.test", 443)
    await guard.check_url("https://nothing.test/x")  # unresolved at creation: let through
    with pytest.raises(DestinationRefused):
        await guard.check_url("https://mixed.test:8443/x")
    assert ("mixed.test", 8443) in resolve.calls


async def test_literals_skip_dns_and_allow_private_lets_everything_through():
    resolve = _resolver({"in.test": ["192.168.1.1"]})
    strict = DestinationGuard(allow_private=False, resolve=resolve)
    with pytest.raises(DestinationRefused):
        await strict.addresses("[::1]", 80)
    assert resolve.calls == []
    relaxed = strict.__class__(allow_private=True, resolve=resolve)
    assert await relaxed.addresses("in.test", 80) == ["192.168.1.1"]
    assert await relaxed.addresses("127.0.0.1", 80) == ["127.0.0.1"]

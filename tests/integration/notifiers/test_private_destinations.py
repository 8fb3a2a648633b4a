"""Destinations on loopback, private or link-local networks are refused at creation unless allowed."""

from __future__ import annotations

from tests.helpers import assert_error

REFUSED = [
    "http://127.0.0.1/hook",
    "http://127.8.9.10:8080/hook",
    "http://localhost:9000/hook",
    "http://10.0.0.1/hook",
    "http://172.16.5.4/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://0.0.0.0/hook",
    "http://[::1]/hook",
    "http://[fe80::1]/hook",
    "http://[fd00::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://100.64.0.1/hook",
    "http://intranet.example/hook",  # resolves to 10.1.2.3
    "http://metadata.example/hook",  # resolves to 169.254.169.254
    "http://mixed.example/hook",  # one public and one private answer
    "http://v6loop.example/hook",  # resolves to ::1
    # IPv6 forms that carry a private IPv4 address, which `is_global` alone calls public
    "http://[::127.0.0.1]/hook",  # IPv4-compatible
    "http://[::ffff:7f00:1]/hook",  # IPv4-mapped, in hex
    "http://[::ffff:0:a00:1]/hook",  # IPv4-translated, 10.0.0.1
    "http://[64:ff9b::7f00:1]/hook",  # NAT64
    "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",  # NAT64 of 169.254.169.254
    "http://[64:ff9b:1::c0a8:101]/hook",  # local-use NAT64
    "http://[2002:7f00:1::]/hook",  # 6to4
    "http://[2002:a00:1::1]/hook",  # 6to4 of 10.0.0.1
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",  # Teredo, client 127.0.0.1
    # IPv4 written as resolvers read it, whatever the resolver at hand does with it
    "http://2130706433/hook",
    "http://0x7f.1/hook",
    "http://017700000001/hook",
    "http://127.1/hook",
    "http://0x7f000001:8080/hook",
    "http://0xa9fea9fe/latest/meta-data",
    "http://127.0.0.1./hook",
]


async def test_private_destination_refused(client, auth, db):
    from sqlalchemy import text

    for type_ in ("chat_a", "chat_b", "chat_c", "webhook"):
        for url in REFUSED:
            r = await client.post(
                "/v1/notifiers", headers=auth, json={"name": "n", "type": type_, "config": {"url": url}}
            )
            try:
                err = assert_error(r, 400, "invalid_field", param="config.url")
            except AssertionError as exc:
                raise AssertionError(f"{type_} {url}: {exc}") from None
            assert "BEACON_ALLOW_PRIVATE_DESTINATIONS" in err["message"]
        # Four numbers with a leading zero: octal to resolvers, an invalid address to httpx, which would send it.
        r = await client.post(
            "/v1/notifiers", headers=auth, json={"name": "n", "type": type_, "config": {"url": "http://0177.0.0.1/"}}
        )
        assert_error(r, 400, "invalid_field", param="config.url")
    async with db() as s:
        assert (await s.execute(text("SELECT count(*) FROM notifiers"))).scalar_one() == 0


async def test_public_or_unresolved_destination_accepted(client, auth):
    for url in (
        "https://public.example/hook",
        "https://93.184.215.14/hook",
        "https://[2606:2800:220:1:248:1893:25c8:1946]/hook",
        "https://[64:ff9b::5db8:d70e]/hook",  # NAT64 of a public address
        "https://[2002:5db8:d70e::1]/hook",  # 6to4 of a public address
        "https://1572394766/hook",  # 93.184.215.14 as one number
        "https://not-resolvable-yet.example/hook",  # checked again at send time
    ):
        r = await client.post(
            "/v1/notifiers", headers=auth, json={"name": url, "type": "webhook", "config": {"url": url}}
        )
        assert r.status_code == 201, (url, r.text)


async def test_update_to_a_private_destination_refused(client, auth):
    n = (
        await client.post(
            "/v1/notifiers",
            headers=auth,
            json={"name": "n", "type": "chat_a", "config": {"url": "https://public.example/a"}},
        )
    ).json()
    r = await client.patch(f"/v1/notifiers/{n['id']}", headers=auth, json={"config": {"url": "http://192.168.0.10/a"}})
    assert_error(r, 400, "invalid_field", param="config.url")
    assert (await client.get(f"/v1/notifiers/{n['id']}", headers=auth)).json()["target"] == "public.example/…/a"


async def test_allowed_when_the_setting_says_so(app_client, auth):
    async with app_client(allow_private_destinations=True) as client:
        for url in ("http://127.0.0.1:8080/hook", "http://intranet.example/x", "http://[::1]/x"):
            r = await client.post(
                "/v1/notifiers", headers=auth, json={"name": url, "type": "chat_a", "config": {"url": url}}
            )
            assert r.status_code == 201, r.text

"""Destinations on loopback, private or link-local networks are refused at creation unless allowed."""

from __future__ import annotations

from litestar.testing import AsyncTestClient

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
    async with db() as s:
        assert (await s.execute(text("SELECT count(*) FROM notifiers"))).scalar_one() == 0


async def test_public_or_unresolved_destination_accepted(client, auth):
    for url in (
        "https://public.example/hook",
        "https://93.184.215.14/hook",
        "https://[2606:2800:220:1:248:1893:25c8:1946]/hook",
        "https://not-resolvable-yet.example/hook",  # checked again at send time
    ):
        r = await client.post(
            "/v1/notifiers", headers=auth, json={"name": "n", "type": "webhook", "config": {"url": url}}
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


async def test_allowed_when_the_setting_says_so(make_app, auth):
    async with AsyncTestClient(app=make_app(allow_private_destinations=True)) as client:
        for url in ("http://127.0.0.1:8080/hook", "http://intranet.example/x", "http://[::1]/x"):
            r = await client.post(
                "/v1/notifiers", headers=auth, json={"name": "n", "type": "chat_a", "config": {"url": url}}
            )
            assert r.status_code == 201, r.text

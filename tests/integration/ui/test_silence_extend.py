"""Extending a silence from the console while someone else extends it too: both extensions count."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx

from tests.integration.ui.conftest import csrf_of, sign_in


async def test_two_extends_at_once_both_count(served, auth, admin_token):
    """The end was read, then written: of two extends at once, one was lost. A real server, so that they overlap."""
    async with (
        httpx.AsyncClient(base_url=served, headers=auth, timeout=30) as api,
        httpx.AsyncClient(base_url=served, timeout=30) as web,
    ):
        assert (await web.post("/ui/login", data={"token": admin_token})).status_code == 303
        csrf = csrf_of((await web.get("/ui/silences")).text)
        until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
        for _ in range(5):
            r = await api.post("/v1/silences", json={"matchers": ["team=db"], "ends_at": until, "comment": "swap"})
            assert r.status_code == 201, r.text
            silence = r.json()
            extends = [
                web.post(f"/ui/silences/{silence['id']}/extend", data={"csrf": csrf, "duration": "1h"})
                for _ in range(2)
            ]
            assert [r.status_code for r in await asyncio.gather(*extends)] == [303, 303]
            now = (await api.get(f"/v1/silences/{silence['id']}")).json()
            gained = datetime.fromisoformat(now["ends_at"]) - datetime.fromisoformat(silence["ends_at"])
            assert gained == timedelta(hours=2)


async def test_an_extend_past_the_last_time_is_a_400(client, auth, admin_token):
    """Past 2199-12-31 a silence cannot end (it was a 500)."""
    body = {"matchers": ["team=db"], "ends_at": "2195-01-01T00:00:00Z", "comment": "long"}
    silence = (await client.post("/v1/silences", headers=auth, json=body)).json()
    await sign_in(client, admin_token)
    csrf = csrf_of((await client.get("/ui/silences")).text)
    r = await client.post(f"/ui/silences/{silence['id']}/extend", data={"csrf": csrf, "duration": "3650d"})
    assert r.status_code == 400 and "must end between 1970-01-01 and 2199-12-31" in r.text
    assert (await client.get(f"/v1/silences/{silence['id']}", headers=auth)).json()["ends_at"] == silence["ends_at"]

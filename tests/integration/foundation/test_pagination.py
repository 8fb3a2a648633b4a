"""Keyset pagination: a 57-item walk with inserts during it, limits, and tampered or foreign cursors."""

from __future__ import annotations

import base64

from app.pagination import CursorCodec
from tests.helpers import assert_error


async def _create(client, auth, name):
    r = await client.post("/v1/tokens", headers=auth, json={"name": name, "scopes": ["ingest"]})
    assert r.status_code == 201
    return r.json()["id"]


async def test_walk_57_items_ten_at_a_time_with_inserts(client, auth):
    for i in range(56):
        await _create(client, auth, f"item-{i}")
    original = {t["id"] for t in (await client.get("/v1/tokens?limit=100", headers=auth)).json()["data"]}
    assert len(original) == 57  # 56 + the admin token
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        url = "/v1/tokens?limit=10" + (f"&cursor={cursor}" if cursor else "")
        page = (await client.get(url, headers=auth)).json()
        assert page["object"] == "list"
        seen += [t["id"] for t in page["data"]]
        pages += 1
        await _create(client, auth, f"inserted-during-walk-{pages}")  # newer: lands before the cursor
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        assert len(page["data"]) == 10
        cursor = page["next_cursor"]
    assert pages == 6
    assert len(seen) == len(set(seen)), "an item was repeated"
    assert set(seen) == original, "an item was skipped or a new one leaked into the walk"


async def test_default_page_size_is_25(client, auth):
    for i in range(30):
        await _create(client, auth, f"t{i}")
    page = (await client.get("/v1/tokens", headers=auth)).json()
    assert len(page["data"]) == 25 and page["has_more"] is True and page["next_cursor"]


async def test_newest_first(client, auth):
    a = await _create(client, auth, "a")
    b = await _create(client, auth, "b")
    ids = [t["id"] for t in (await client.get("/v1/tokens", headers=auth)).json()["data"]]
    assert ids.index(b) < ids.index(a)


async def test_tampered_cursor(client, auth):
    for i in range(3):
        await _create(client, auth, f"t{i}")
    cursor = (await client.get("/v1/tokens?limit=1", headers=auth)).json()["next_cursor"]
    data, sig = cursor.split(".")
    raw = bytearray(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    raw[-1] ^= 1
    forged = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode() + "." + sig
    for bad in (forged, cursor[:-2], "garbage", cursor + "x", "a.b"):
        assert_error(await client.get(f"/v1/tokens?cursor={bad}", headers=auth), 400, "invalid_cursor", param="cursor")


async def test_cursor_from_another_list_or_key(client, auth):
    foreign = CursorCodec("test-secret-key").encode("annotations", ["x", "y"])
    assert_error(await client.get(f"/v1/tokens?cursor={foreign}", headers=auth), 400, "invalid_cursor")
    other_key = CursorCodec("another-secret").encode("tokens", ["x", "y"])
    assert_error(await client.get(f"/v1/tokens?cursor={other_key}", headers=auth), 400, "invalid_cursor")


async def test_expired_cursor(client, auth, monkeypatch):
    import app.pagination as pagination

    await _create(client, auth, "a")
    await _create(client, auth, "b")
    cursor = (await client.get("/v1/tokens?limit=1", headers=auth)).json()["next_cursor"]
    real_time = pagination.time.time
    monkeypatch.setattr(pagination.time, "time", lambda: real_time() + 2 * 24 * 3600)
    err = assert_error(await client.get(f"/v1/tokens?cursor={cursor}", headers=auth), 400, "invalid_cursor")
    assert "expired" in err["message"]

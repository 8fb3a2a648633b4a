"""The /v1/datasets endpoints: list, detail with stats, fields, patch, delete; scopes and limited tokens."""

from __future__ import annotations

import re

from tests.helpers import assert_error
from tests.integration.ingest.util import count_rows, ndjson, post_events

ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


async def seed(client, auth, name="web", n=3):
    events = [{"_time": f"2026-11-2{i}T08:00:00Z", "i": i, "http": {"status": 200}} for i in range(1, n + 1)]
    assert (await post_events(client, auth, name, ndjson(events))).status_code == 200


async def test_list_newest_first_with_pagination(client, auth):
    for name in ("a", "b", "c"):
        await seed(client, auth, name, 1)
    page = (await client.get("/v1/datasets", headers=auth, params={"limit": 2})).json()
    assert page["object"] == "list" and page["has_more"] is True
    assert [d["name"] for d in page["data"]] == ["c", "b"]
    assert page["data"][0] == {
        "object": "dataset",
        "name": "c",
        "created_at": page["data"][0]["created_at"],
        "description": None,
        "retention_days": None,
    }
    assert ISO_MS.fullmatch(page["data"][0]["created_at"])
    rest = (await client.get("/v1/datasets", headers=auth, params={"cursor": page["next_cursor"]})).json()
    assert [d["name"] for d in rest["data"]] == ["a"] and rest["next_cursor"] is None


async def test_detail_has_stats(client, auth):
    await seed(client, auth, "web", 3)
    body = (await client.get("/v1/datasets/web", headers=auth)).json()
    assert body["object"] == "dataset" and body["name"] == "web"
    assert body["fields_count"] == 2
    assert body["events_estimate"] == 3
    assert body["min_time"] == "2026-11-21T08:00:00.000Z"
    assert body["max_time"] == "2026-11-23T08:00:00.000Z"


async def test_fields_list(client, auth):
    await seed(client, auth, "web", 1)
    await post_events(client, auth, "web", ndjson([{"i": "one", "later": True}]))
    body = (await client.get("/v1/datasets/web/fields", headers=auth)).json()
    assert body["object"] == "list"
    by_name = {f["name"]: f for f in body["data"]}
    assert set(by_name) == {"i", "http.status", "later"}
    assert by_name["i"]["types"] == ["number", "string"]
    assert by_name["later"] == {
        "object": "field",
        "name": "later",
        "types": ["boolean"],
        "first_seen": by_name["later"]["first_seen"],
    }
    assert body["data"][0]["name"] == "later"  # newest first
    page = (await client.get("/v1/datasets/web/fields", headers=auth, params={"limit": 1})).json()
    assert page["has_more"] and len(page["data"]) == 1
    nxt = await client.get("/v1/datasets/web/fields", headers=auth, params={"limit": 1, "cursor": page["next_cursor"]})
    assert nxt.json()["data"][0]["name"] != "later"
    # A cursor from another dataset's list is refused.
    await seed(client, auth, "other", 1)
    r = await client.get("/v1/datasets/other/fields", headers=auth, params={"cursor": page["next_cursor"]})
    assert_error(r, 400, "invalid_cursor")


async def test_patch(client, auth):
    await seed(client, auth)
    r = await client.patch("/v1/datasets/web", headers=auth, json={"description": "front end", "retention_days": 30})
    assert r.status_code == 200
    assert (r.json()["description"], r.json()["retention_days"]) == ("front end", 30)
    r = await client.patch("/v1/datasets/web", headers=auth, json={"retention_days": None})
    assert (r.json()["description"], r.json()["retention_days"]) == ("front end", None)
    listed = (await client.get("/v1/datasets", headers=auth)).json()["data"][0]
    assert listed["description"] == "front end"
    assert_error(
        await client.patch("/v1/datasets/web", headers=auth, json={"retention_days": 0}),
        400,
        "invalid_field",
        param="retention_days",
    )
    assert_error(
        await client.patch("/v1/datasets/web", headers=auth, json={"retention": 3}),
        400,
        "invalid_field",
        param="retention",
    )
    assert_error(await client.patch("/v1/datasets/nope", headers=auth, json={}), 404, "not_found")


async def test_delete_takes_the_events(client, auth, db):
    await seed(client, auth, "web", 3)
    await seed(client, auth, "keep", 2)
    assert (await client.delete("/v1/datasets/web", headers=auth)).status_code == 204
    assert_error(await client.get("/v1/datasets/web", headers=auth), 404, "not_found")
    assert await count_rows(db, "events") == 2
    assert (await client.get("/v1/datasets/keep", headers=auth)).json()["events_estimate"] == 2
    # Ingesting again starts a new, empty dataset.
    await seed(client, auth, "web", 1)
    fresh = (await client.get("/v1/datasets/web", headers=auth)).json()
    assert fresh["events_estimate"] == 1 and fresh["fields_count"] == 2
    assert_error(await client.delete("/v1/datasets/web-nope", headers=auth), 404, "not_found")


async def test_scopes(client, auth, make_token):
    await seed(client, auth)
    reader = {"Authorization": f"Bearer {await make_token(['datasets:read'])}"}
    assert (await client.get("/v1/datasets/web", headers=reader)).status_code == 200
    assert (await client.get("/v1/datasets/web/fields", headers=reader)).status_code == 200
    assert_error(await client.patch("/v1/datasets/web", headers=reader, json={}), 403, "insufficient_scope")
    assert_error(await client.delete("/v1/datasets/web", headers=reader), 403, "insufficient_scope")
    ingester = {"Authorization": f"Bearer {await make_token(['ingest'])}"}
    assert_error(await client.get("/v1/datasets", headers=ingester), 403, "insufficient_scope")


async def test_dataset_limited_token_sees_only_its_datasets(client, auth, make_token):
    await seed(client, auth, "web")
    await seed(client, auth, "billing")
    limited = {"Authorization": f"Bearer {await make_token(['datasets:read', 'datasets:write'], datasets=['web'])}"}
    names = [d["name"] for d in (await client.get("/v1/datasets", headers=limited)).json()["data"]]
    assert names == ["web"]
    assert_error(await client.get("/v1/datasets/billing", headers=limited), 403, "insufficient_scope")
    assert_error(await client.delete("/v1/datasets/billing", headers=limited), 403, "insufficient_scope")


async def test_bad_names(client, auth):
    assert_error(await client.get("/v1/datasets/-bad", headers=auth), 400, "invalid_parameter", param="dataset")
    assert_error(await client.get("/v1/datasets/a%20b/fields", headers=auth), 400, "invalid_parameter", param="dataset")

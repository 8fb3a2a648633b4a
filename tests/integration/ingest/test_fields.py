"""Field discovery: names and JSON types recorded as events arrive, cached per process, never half-recorded."""

from __future__ import annotations

from tests.integration.ingest.util import JSON, fields_of, ndjson, post_events


async def test_fields_and_types_are_recorded(client, auth, db):
    await post_events(
        client,
        auth,
        "web",
        ndjson(
            [
                {"_time": 1795248930, "status": 200, "http": {"path": "/"}, "tags": ["a"], "ok": True},
                {"status": "500", "extra": None, "o": {}},
            ]
        ),
    )
    assert await fields_of(db, "web") == {
        "status": ["number", "string"],
        "http.path": ["string"],
        "tags": ["array"],
        "ok": ["boolean"],
        "extra": ["null"],
        "o": ["object"],
    }


async def test_later_requests_add_types_and_fields(client, auth, db):
    await post_events(client, auth, "web", ndjson([{"a": 1, "b": "x"}]))
    await post_events(client, auth, "web", ndjson([{"a": 1, "b": "x"}]))  # same shape again: cached
    await post_events(client, auth, "web", ndjson([{"a": 1.5, "b": "x", "c": [1]}, {"a": "one"}]))
    assert await fields_of(db, "web") == {"a": ["number", "string"], "b": ["string"], "c": ["array"]}


async def test_two_processes_with_their_own_caches(app_client, auth, db):
    """Each server process caches what it recorded; what another process adds is merged, not lost."""
    async with app_client() as one, app_client() as two:
        await post_events(one, auth, "web", ndjson([{"a": 1}]))
        await post_events(two, auth, "web", ndjson([{"a": "text"}]))
        await post_events(one, auth, "web", ndjson([{"a": True}]))
        await post_events(two, auth, "web", ndjson([{"a": 1}, {"b": None}]))
    assert await fields_of(db, "web") == {"a": ["boolean", "number", "string"], "b": ["null"]}


async def test_fields_are_per_dataset(client, auth, db):
    await post_events(client, auth, "one", ndjson([{"a": 1}]))
    await post_events(client, auth, "two", ndjson([{"a": "x"}]))
    assert await fields_of(db, "one") == {"a": ["number"]}
    assert await fields_of(db, "two") == {"a": ["string"]}


async def test_failed_request_records_no_fields(client, auth, db):
    r = await post_events(client, auth, "web", b'[{"new_field": 1}, {"broken": ', content_type=JSON)
    assert r.status_code == 400
    assert await fields_of(db, "web") == {}
    # ...and the cache did not keep it either: a good request records it.
    await post_events(client, auth, "web", ndjson([{"new_field": 1}]))
    assert await fields_of(db, "web") == {"new_field": ["number"]}


async def test_failed_events_add_no_fields(client, auth, db):
    await post_events(client, auth, "web", ndjson([{"good": 1}, {"bad": 1, "_time": "never"}]))
    assert await fields_of(db, "web") == {"good": ["number"]}

"""POST /v1/ingest/{dataset}: JSON arrays and NDJSON, plain and gzip, times, flattening, partial failures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from tests.helpers import assert_error
from tests.integration.ingest.util import JSON, NDJSON, ndjson, post_events, stored

T1 = "2026-11-21T08:15:30.123Z"
T1_DT = datetime(2026, 11, 21, 8, 15, 30, 123000, tzinfo=UTC)
EVENTS = [
    {"_time": T1, "service": "api", "http": {"status": 500, "path": "/x"}, "tags": ["a", "b"], "user": None},
    {"_time": 1795248931, "service": "web", "duration_ms": 12.5},
]


@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("content_type", [JSON, NDJSON])
async def test_each_format_and_encoding(client, auth, db, content_type, gzip):
    body = orjson.dumps(EVENTS) if content_type == JSON else ndjson(EVENTS)
    r = await post_events(client, auth, "web-logs", body, content_type=content_type, gzip=gzip)
    assert r.status_code == 200, r.text
    result = r.json()
    assert result == {
        "object": "ingest_result",
        "dataset": "web-logs",
        "ingested": 2,
        "failed": 0,
        "failures": [],
        "processed_bytes": len(body),
        "blocks_created": 1,
        "warnings": [],
    }
    rows = await stored(db, "web-logs")
    assert [r["time"] for r in rows] == [T1_DT, datetime(2026, 11, 21, 8, 15, 31, tzinfo=UTC)]
    assert rows[0]["data"] == {
        "service": "api",
        "http.status": 500,
        "http.path": "/x",
        "tags": ["a", "b"],
        "user": None,
    }
    assert rows[1]["data"] == {"service": "web", "duration_ms": 12.5}
    assert rows[0]["sys_time"] == rows[1]["sys_time"]
    assert abs(rows[0]["sys_time"] - datetime.now(UTC)) < timedelta(minutes=1)


async def test_missing_time_is_arrival(client, auth, db):
    before = datetime.now(UTC)
    r = await post_events(client, auth, "web", ndjson([{"msg": "no time"}]))
    assert r.status_code == 200
    (row,) = await stored(db, "web")
    assert row["time"] == row["sys_time"]
    assert before - timedelta(seconds=1) <= row["time"] <= datetime.now(UTC)
    assert row["data"] == {"msg": "no time"}


async def test_single_object_body_is_one_event(client, auth, db):
    r = await post_events(client, auth, "web", b'{"_time": 1795248930, "a": 1}', content_type=JSON)
    assert r.json()["ingested"] == 1
    assert (await stored(db))[0]["data"] == {"a": 1}


async def test_blank_lines_ignored_and_failures_indexed(client, auth, db):
    body = (
        b'{"a": 1}\n'
        b"\n"
        b"   \r\n"
        b"not json\n"
        b"[1, 2]\n"
        b'{"_time": "last tuesday"}\n'
        b'{"a": 2}'  # no newline at the end
    )
    r = await post_events(client, auth, "web", body)
    result = r.json()
    assert r.status_code == 200
    assert result["ingested"] == 2 and result["failed"] == 3
    assert [f["index"] for f in result["failures"]] == [1, 2, 3]
    assert "not valid JSON" in result["failures"][0]["error"]
    assert result["failures"][1]["error"] == "event is not a JSON object"
    assert "last tuesday" in result["failures"][2]["error"]
    assert [r["data"] for r in await stored(db)] == [{"a": 1}, {"a": 2}]


async def test_failures_list_is_capped_at_ten(client, auth):
    body = orjson.dumps([{"ok": 1}] + [5] * 25)
    result = (await post_events(client, auth, "web", body, content_type=JSON)).json()
    assert result["ingested"] == 1 and result["failed"] == 25
    assert [f["index"] for f in result["failures"]] == list(range(1, 11))


async def test_unix_time_units_by_magnitude(client, auth, db):
    events = [
        {"_time": 1795248930, "u": "s"},
        {"_time": 1795248930500, "u": "ms"},
        {"_time": 1795248930000250, "u": "us"},
        {"_time": 1795248930000000750, "u": "ns"},
        {"_time": "2026-11-21T10:15:30.75+02:00", "u": "rfc3339"},
    ]
    await post_events(client, auth, "web", ndjson(events))
    by_unit = {r["data"]["u"]: r["time"] for r in await stored(db)}
    base = datetime(2026, 11, 21, 8, 15, 30, tzinfo=UTC)
    assert by_unit == {
        "s": base,
        "ms": base + timedelta(milliseconds=500),
        "us": base + timedelta(microseconds=250),
        "ns": base,
        "rfc3339": base + timedelta(milliseconds=750),
    }


async def test_timestamp_field_and_format(client, auth, db):
    events = [
        {"ts": "21/Nov/2026:10:15:30 +0200", "n": 1},
        {"ts": "21/Nov/2026:08:15:31 +0000", "n": 2, "_time": "kept as a field"},
        {"ts": "2026-11-21T08:15:30Z", "n": 3},  # does not match the layout: fails
    ]
    r = await post_events(
        client,
        auth,
        "web",
        ndjson(events),
        params={"timestamp-field": "ts", "timestamp-format": "02/Jan/2006:15:04:05 -0700"},
    )
    result = r.json()
    assert result["ingested"] == 2 and result["failed"] == 1
    assert result["failures"][0]["index"] == 2 and "does not match the layout" in result["failures"][0]["error"]
    rows = await stored(db)
    assert [r["time"] for r in rows] == [datetime(2026, 11, 21, 8, 15, s, tzinfo=UTC) for s in (30, 31)]
    assert rows[1]["data"] == {"n": 2, "_time": "kept as a field"}


async def test_named_layout_and_nested_timestamp_field(client, auth, db):
    events = [{"meta": {"at": "Sat, 21 Nov 2026 08:15:30 -0700", "host": "h1"}}]
    r = await post_events(
        client, auth, "web", ndjson(events), params={"timestamp-field": "meta.at", "timestamp-format": "RFC1123Z"}
    )
    assert r.json()["ingested"] == 1, r.text
    (row,) = await stored(db)
    assert row["time"] == datetime(2026, 11, 21, 15, 15, 30, tzinfo=UTC)
    assert row["data"] == {"meta.host": "h1"}


async def test_bad_layout_is_a_parameter_error(client, auth, db):
    r = await post_events(client, auth, "web", ndjson([{"a": 1}]), params={"timestamp-format": "yyyy-MM-dd"})
    assert_error(r, 400, "invalid_parameter", param="timestamp-format")
    r = await post_events(client, auth, "web", ndjson([{"a": 1}]), params={"timestamp-field": ""})
    assert_error(r, 400, "invalid_parameter", param="timestamp-field")
    assert await stored(db) == []


@pytest.mark.parametrize("content_type", [JSON, NDJSON])
async def test_nul_characters_fail_the_event(client, auth, db, content_type):
    events = [b'{"a": "x\\u0000y"}', b'{"b\\u0000": 1}', b'{"c": "\\\\u0000 is text"}']
    body = b"[" + b",".join(events) + b"]" if content_type == JSON else b"\n".join(events)
    result = (await post_events(client, auth, "web", body, content_type=content_type)).json()
    assert result["ingested"] == 1 and result["failed"] == 2
    assert "U+0000" in result["failures"][0]["error"]
    assert [r["data"] for r in await stored(db)] == [{"c": "\\u0000 is text"}]


async def test_deep_nesting_fails_only_that_event(client, auth, db):
    deep = b'{"k": ' * 300 + b"1" + b"}" * 300  # 300 levels: decodes, but too deep to flatten
    deeper = b"[" * 5000 + b"]" * 5000  # too deep even to decode
    body = deep + b"\n" + ndjson([{"ok": True}]) + b'{"x": ' + deeper + b"}\n"
    result = (await post_events(client, auth, "web", body)).json()
    assert result["ingested"] == 1 and result["failed"] == 2
    assert "levels deep" in result["failures"][0]["error"]
    assert "nested too deeply" in result["failures"][1]["error"]


async def test_request_of_only_failures_creates_nothing(client, auth, db):
    result = (await post_events(client, auth, "ghost", b"nope\n")).json()
    assert result["ingested"] == 0 and result["failed"] == 1
    assert (await client.get("/v1/datasets/ghost", headers=auth)).status_code == 404

"""The ingest result warns when events were stamped with their arrival time although they carry a field that
looks like their time, without `timestamp-field` (issue 18): otherwise a whole load lands at "now", silently."""

from __future__ import annotations

from tests.integration.ingest.util import JSON, ndjson, post_events, stored


async def test_a_timestamp_field_without_the_parameter_is_named(client, auth, db):
    events = [{"timestamp": "2026-01-02T03:04:05Z", "msg": str(i)} for i in range(3)]
    r = await post_events(client, auth, "web", ndjson(events))
    assert r.status_code == 200
    assert r.json()["warnings"] == [
        {
            "code": "time_from_arrival",
            "message": "3 events had no `_time` and were stamped with the arrival time, but carry `timestamp`: "
            "pass `timestamp-field=timestamp` (and `timestamp-format` if it is not RFC 3339 or a unix time) to "
            "take the event time from it.",
            "field": "timestamp",
            "suggestion": None,
            "param": "timestamp-field",
        }
    ]
    # The events were stored as before (the warning changes nothing) ...
    assert all(e["time"].year >= 2026 and e["data"]["timestamp"] for e in await stored(db, "web"))
    # ... and with the parameter their time is read and nothing is said.
    r = await post_events(client, auth, "web", ndjson(events), params={"timestamp-field": "timestamp"})
    assert r.json()["warnings"] == [] and r.json()["ingested"] == 3


async def test_each_time_like_name_and_the_json_array_form(client, auth):
    for name in ("time", "@timestamp", "ts"):
        r = await post_events(client, auth, "web", f'[{{"{name}": 1795248930, "a": 1}}]'.encode(), content_type=JSON)
        (warning,) = r.json()["warnings"]
        assert warning["field"] == name and f"`timestamp-field={name}`" in warning["message"]
        assert warning["message"].startswith("1 event had no `_time` and was stamped")
    r = await post_events(client, auth, "web", ndjson([{"ts": 1, "time": "x", "b": 2}] * 5))
    (warning,) = r.json()["warnings"]
    assert warning["field"] == "time" and "(they also have `ts`)" in warning["message"]


async def test_no_warning_when_the_time_was_read(client, auth):
    mixed = [
        {"_time": "2026-01-02T03:04:05Z", "timestamp": "kept as a field"},  # has _time: its own time is used
        {"msg": "no time-like field at all"},
        {"nested": {"timestamp": 1}},  # `nested.timestamp` is not a top-level time field
    ]
    r = await post_events(client, auth, "web", ndjson(mixed))
    assert r.status_code == 200 and r.json()["ingested"] == 3 and r.json()["warnings"] == []
    # Another field named by the parameter: a `timestamp` beside it is not the problem.
    r = await post_events(
        client, auth, "web", ndjson([{"when": 1795248930, "ts": 5}]), params={"timestamp-field": "when"}
    )
    assert r.json()["warnings"] == []


async def test_only_events_stamped_with_arrival_count(client, auth):
    events = [{"_time": 1795248930, "ts": 1}] * 4 + [{"ts": 1795248930}] * 2
    r = await post_events(client, auth, "web", ndjson(events))
    (warning,) = r.json()["warnings"]
    assert warning["message"].startswith("2 events had no `_time`")
    # Events that failed are not ingested and are not counted.
    r = await post_events(client, auth, "web", ndjson([{"_time": "bad", "ts": 1}]))
    assert r.json()["failed"] == 1 and r.json()["warnings"] == []

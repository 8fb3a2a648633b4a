"""The shortcuts of the row builder store exactly what the general path stores: shape plans (app/ingest/plans.py)
and the compiled row builder (app/ingest/_fastrows.c).

Each stream below runs through three RowBuilders, one with shape plans, one compiled and one with neither, and
everything a user could see must match: the COPY payload byte for byte (times, JSON), the failures with their
indexes and reasons, the days, per-minute counts, the field types discovered and the events stamped with their
arrival time. Each stream first repeats one shape, so the shortcuts are really used, then breaks it in one way.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from app.ingest import copyfmt
from app.ingest.plans import plan_for
from app.ingest.rows import RowBuilder, field_types
from app.ingest.timestamps import make_reader

ARRIVAL_US = 1_800_000_000_000_000


def _event(i: int) -> dict[str, Any]:
    return {
        "_time": f"2026-11-21T10:00:{i % 60:02d}.{i:06d}Z",
        "service": f"svc-{i % 3}",
        "http": {"method": "GET", "status": 200 + i, "timing": {"ms": i / 7}},
        "user": {"id": f"u{i}", "tags": ["a", {"b": i}]},
        "ok": i % 2 == 0,
        "gone": None,
    }


def _lines(events: list[Any]) -> list[bytes]:
    return [e if isinstance(e, bytes) else msgspec.json.encode(e) for e in events]


def _repeat(n: int = 12) -> list[bytes]:
    return _lines([_event(i) for i in range(n)])


def _typed(value: Any) -> Any:
    """A JSON value in a form where 1 and 1.0 differ (as they do in the stored JSON) and key order does not."""
    if isinstance(value, dict):
        return sorted((k, _typed(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _rows(payload: bytearray) -> list[tuple[int, int, int, Any]]:
    view = bytes(payload)
    assert view.startswith(copyfmt.HEADER) and view.endswith(copyfmt.TRAILER)
    pos, rows = len(copyfmt.HEADER), []
    while pos < len(view) - len(copyfmt.TRAILER):
        (_count, _, dataset, _, time, _, sys_time, size, version) = struct.unpack_from(">hiiiqiqiB", view, pos)
        pos += copyfmt.ROW.size
        assert version == 1
        rows.append((dataset, time, sys_time, msgspec.json.decode(view[pos : pos + size - 1])))
        pos += size - 1
    return rows


def _run(
    lines: list[bytes], *, plans: bool, compiled: bool = False, timestamp_field: str = "_time", split: int = 5
) -> dict[str, Any]:
    builder = RowBuilder(
        dataset_id=7,
        arrival_us=ARRIVAL_US,
        timestamp_field=timestamp_field,
        read_time=make_reader(None, datetime.now(UTC)),
        max_event_bytes=2_000,
        shape_plans=plans,
        compiled=compiled,
    )
    assert (builder._fast is not None) == compiled, "the compiled row builder is not built (setup.py)"
    for start in range(0, len(lines), split):  # several calls, as the service makes them per chunk
        builder.add_lines(lines[start : start + split])
    payload, days, count = builder.take_chunk()
    rows = _rows(payload)
    assert len(rows) == count
    return {
        "payload": bytes(payload),
        "rows": rows,
        "days": days,
        "minutes": builder.minutes,
        "failed": builder.failed,
        "failures": [(f.index, f.error) for f in builder.failures],
        "fields": field_types(builder.shapes),
        "shapes": builder.shapes,
        "stamped": builder.stamped,
        "stamped_keys": builder.stamped_keys,
        "index": builder.index,
        "planned": builder.planned,
        "compiled": builder.compiled,
    }


def _same(result: dict[str, Any], general: dict[str, Any], *, exact: bool) -> None:
    """`exact`: the payload byte for byte. Shape plans may write a shape's keys in the order they learned it (a
    jsonb value keeps no key order) and know int and float only as "number"."""
    counters = ("planned", "compiled") if exact else ("planned", "compiled", "shapes", "payload")
    assert {k: v for k, v in result.items() if k not in counters} == {
        k: v for k, v in general.items() if k not in counters
    }
    assert [_typed(row[3]) for row in result["rows"]] == [_typed(row[3]) for row in general["rows"]]


def _same_either_way(lines: list[bytes], **kwargs: Any) -> dict[str, Any]:
    """The shape plans' result (the compiled builder's is checked, too: `compiled_result`)."""
    planned = _run(lines, plans=True, **kwargs)
    general = _run(lines, plans=False, **kwargs)
    compiled = _run(lines, plans=False, compiled=True, **kwargs)
    assert general["planned"] == 0 and general["compiled"] == 0
    _same(planned, general, exact=False)
    _same(compiled, general, exact=True)
    planned["compiled_result"] = compiled
    return planned


def test_a_repeated_shape_is_read_through_the_plan() -> None:
    result = _same_either_way(_repeat(40))
    assert result["planned"] == 39  # all but the first line, which the plan is learned from
    first = result["rows"][0]
    assert first[0] == 7
    assert first[3] == {
        "service": "svc-0",
        "http.method": "GET",
        "http.status": 200,
        "http.timing.ms": 0.0,
        "user.id": "u0",
        "user.tags": ["a", {"b": 0}],
        "ok": True,
        "gone": None,
    }
    assert result["fields"]["http.timing.ms"] == {"number"}
    assert result["fields"]["gone"] == {"null"}


def _with(change: dict[str, Any]) -> dict[str, Any]:
    return {**_event(99), **change}


BREAKS: dict[str, list[Any]] = {
    "missing field": [{k: v for k, v in _event(99).items() if k != "ok"}],
    "extra field": [_with({"extra": 1})],
    "keys in another order": [dict(reversed(list(_event(99).items())))],
    "object where a scalar was": [_with({"service": {"name": "x"}})],
    "nested object where a scalar was": [_with({"http": {"method": {"verb": "GET"}, "status": 1, "timing": {}}})],
    "scalar where an object was": [_with({"http": "GET /"})],
    "empty object where an object was": [_with({"user": {}})],
    "empty object where a scalar was": [_with({"ok": {}})],
    "repeated key": [
        b'{"_time":"2026-11-21T10:00:00Z","service":"a","service":"b","http":{"method":"GET","status":1,'
        b'"timing":{"ms":1}},"user":{"id":"u","tags":[]},"ok":true,"gone":null}'
    ],
    "escaped key": [
        b'{"_time":"2026-11-21T10:00:00Z","serv\\u0069ce":"a","http":{"method":"GET","status":1,'
        b'"timing":{"ms":1}},"user":{"id":"u","tags":[]},"ok":true,"gone":null}'
    ],
    "integer beyond 64 bits": [_with({"service": 2**70})],
    "float where an integer was": [_with({"http": {"method": "GET", "status": 200.0, "timing": {"ms": 1.5}}})],
    "integer where a float was": [_with({"http": {"method": "GET", "status": 200, "timing": {"ms": 3}}})],
    "negative zeros": [_with({"http": {"method": "GET", "status": -0, "timing": {"ms": -0.0}}})],
    "string where a number was": [_with({"http": {"method": "GET", "status": "200", "timing": {"ms": 1.5}}})],
    "null where a string was": [_with({"service": None})],
    "array where a string was": [_with({"service": ["a"]})],
    "boolean where null was": [_with({"gone": False})],
    "number out of range": [b'{"_time":"2026-11-21T10:00:00Z","service":1e400}'],
    "U+0000 in a value": [_with({"service": "a\x00b"})],
    "U+0000 in a key": [_with({"serv\x00ice": 1})],
    "not JSON": [b'{"_time": "2026-11-21T10:00:00Z", "service": '],
    "invalid UTF-8 in a value": [
        b'{"_time":"2026-11-21T10:00:00Z","service":"a\xffb","http":{"method":"GET","status":1,'
        b'"timing":{"ms":1}},"user":{"id":"u","tags":[]},"ok":true,"gone":null}'
    ],
    "invalid UTF-8 in a nested value": [
        b'{"_time":"2026-11-21T10:00:00Z","service":"a","http":{"method":"G\xc3","status":1,'
        b'"timing":{"ms":1}},"user":{"id":"u","tags":["\xed\xa0\x80"]},"ok":true,"gone":null}'
    ],
    "invalid UTF-8 in a key": [
        b'{"_time":"2026-11-21T10:00:00Z","serv\xffice":"a","http":{"method":"GET","status":1,'
        b'"timing":{"ms":1}},"user":{"id":"u","tags":[]},"ok":true,"gone":null}'
    ],
    "invalid UTF-8 in the timestamp": [_lines([_event(1)])[0].replace(b"2026-11-21", b"2026-\xff-21")],
    "a raw NUL byte": [_lines([_with({"service": "a"})])[0].replace(b'"a"', b'"a\x00b"')],
    "not an object": [b"[1, 2]", b'"text"', b"null"],
    "blank lines": [b"", b"   "],
    "bad timestamp": [_with({"_time": "yesterday"})],
    "timestamp as an object": [_with({"_time": {"at": 1}})],
    "missing timestamp": [{k: v for k, v in _event(99).items() if k != "_time"}],
    "numeric timestamp": [_with({"_time": 1_790_000_000_123})],
    "too large after flattening": [_with({"service": "x" * 1_900})],
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_break_in_the_shape_is_read_as_the_general_path_reads_it(name: str) -> None:
    breaks = _lines(BREAKS[name])
    # The break between repeats, and repeated past the point where the plan gives up and learns anew.
    result = _same_either_way(_repeat(6) + breaks + _repeat(3) + breaks * 5 + _repeat(6))
    assert result["planned"] > 0


def test_collisions_and_odd_keys() -> None:
    events = [
        {"a.b": 1, "a": {"b": 2}},  # collides: the later key wins
        {"a": {"b": 2}, "a.b": 1},
        {"a": {"b.c": 1, "b": {"c": 2}}},
    ]
    for event in events:
        _same_either_way(_lines([{**event, "n": i} for i in range(8)]))
    odd = _same_either_way(_lines([{"ünï": {"cödé": 2}, "": {"": 3}, "n": i} for i in range(8)]))
    assert odd["planned"] == 7
    assert odd["rows"][0][3] == {"ünï.cödé": 2, ".": 3, "n": 0}
    # msgspec cannot name a Struct field with a quote, a backslash or a control character: no plan, same rows.
    quoted = _same_either_way(_lines([{'quo"te': i, "back\\slash": {"x": 1}} for i in range(8)]))
    assert quoted["planned"] == 0 and quoted["rows"][0][3] == {'quo"te': 0, "back\\slash.x": 1}


@pytest.mark.parametrize("field", ["meta.ts", "meta", "ts"])
def test_timestamp_fields_named_by_dot_path_or_holding_objects(field: str) -> None:
    events = [{"meta": {"ts": f"2026-11-21T10:00:0{i}Z", "x": i}, "ts": 1_790_000_000 + i, "y": i} for i in range(8)]
    _same_either_way(_lines(events), timestamp_field=field)


def test_a_stream_of_ever_new_shapes() -> None:
    lines = _lines([{f"k{i}": {"v": i}, "n": i} for i in range(60)])
    result = _same_either_way(lines)
    assert result["planned"] == 0
    assert len(result["fields"]) == 61


def test_alternating_shapes() -> None:
    lines = _lines([_event(i) if i % 2 else {"other": {"x": i}, "y": i} for i in range(40)])
    result = _same_either_way(lines)
    assert result["planned"] > 0


def test_no_plan_for_shapes_it_cannot_serve() -> None:
    assert plan_for({"only": 1, "_time": "t"}, "_time") is None  # one value: attrgetter would not give a tuple
    assert plan_for({"k\x00": 1, "j": 2}, "_time") is None
    assert plan_for({"empty": {}, "j": 2}, "_time") is None  # no Struct accepts only {}
    deep: dict[str, Any] = {"leaf": 1, "other": 2}
    for _ in range(20):
        deep = {"k": deep, "z": 0}
    assert plan_for(deep, "_time") is None
    plan = plan_for({"a": 1, "b": {"c": 2}, "_time": "t"}, "_time")
    assert plan is not None and plan.keys == ("a", "b.c")
    assert msgspec.json.decode(
        msgspec.json.encode(plan.flat(*plan.values(plan.decode(b'{"_time":0,"b":{"c":3},"a":1}'))))
    ) == {
        "a": 1,
        "b.c": 3,
    }

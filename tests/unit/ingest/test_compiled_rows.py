"""The compiled row builder (app/ingest/_fastrows.c) stores exactly what the general path stores, byte for byte.

It serves only the events it can prove it reads the general way and hands every other one back; these tests
check both halves: what it serves is identical (payload, failures, days, minute counts, shapes, stamped events),
and the common streams are really served by it (else the speed is gone while every test still passes).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.ingest.test_shape_plans import _run

BENCH_LIKE = {
    "_time": "2026-11-21T10:00:00.123Z",
    "service": "checkout",
    "level": "info",
    "message": "request handled in 12 ms",
    "http": {"method": "GET", "path": "/api/v1/orders/1", "status": 200, "duration_ms": 12.34, "agent": "curl/8"},
    "user": {"id": "u_1", "country": "DE"},
    "trace_id": "00ff00ff00ff00ff",
    "host": "web-1",
}


def _compare(lines: list[bytes], *, split: int = 7, **kwargs: Any) -> dict[str, Any]:
    general = _run(lines, plans=False, split=split, **kwargs)
    compiled = _run(lines, plans=False, compiled=True, split=split, **kwargs)
    assert {k: v for k, v in compiled.items() if k != "compiled"} == {
        k: v for k, v in general.items() if k != "compiled"
    }
    return compiled


def _line(event: Any) -> bytes:
    return event if isinstance(event, bytes) else msgspec.json.encode(event)


def test_the_common_stream_is_served_compiled() -> None:
    lines = [_line({**BENCH_LIKE, "n": i, "_time": f"2026-11-21T10:{i % 60:02d}:00.{i:03d}Z"}) for i in range(200)]
    result = _compare(lines)
    assert result["compiled"] == 200
    assert len(result["rows"]) == 200 and result["failed"] == 0
    assert result["rows"][0][3]["http.duration_ms"] == 12.34
    # Pretty-printed JSON with escapes too: what is stored is msgspec's compact form either way.
    pretty = [json.dumps({**BENCH_LIKE, "message": 'said "hi"\n\tthen \\ left/ é \u2028'}, indent=2).encode()] * 3
    assert _compare(pretty)["compiled"] == 3


# Each value below is stored or failed exactly as the general path does; `served` says whether the compiled
# builder takes it (False: it hands the event back, which must be the case where its own rules would differ).
NUMBERS = [
    (b"0", True),
    (b"-12", True),
    (b"123456789012345678", True),
    (b"1234567890123456789", False),  # past 18 digits: the general path
    (b"-0", False),  # written 0
    (b"12.5", True),
    (b"12.0", True),
    (b"12.50", False),  # written 12.5
    (b"-0.0", True),
    (b"0.0001", True),
    (b"0.00001", False),
    (b"123456789012345.5", False),  # 16 significant digits
    (b"12345678901234.5", True),
    (b"1e2", False),
    (b"1.5E3", False),
    (b"1e400", False),
    (b"01", False),  # not JSON
    (b"1.", False),
    (b"-", False),
]


@pytest.mark.parametrize(("number", "served"), NUMBERS)
def test_numbers(number: bytes, served: bool) -> None:
    lines = [b'{"_time":"2026-11-21T10:00:00Z","v":' + number + b',"n":1}'] * 3
    assert _compare(lines)["compiled"] == (3 if served else 0)


STRINGS = [
    (rb'"plain"', True),
    (rb'"\" \\ \/ \b \f \n \r \t"', True),
    (rb'"\u0001\u001f\u007f\u0022\u005c\u002f"', True),
    (rb'"\u00e9\u20ac\ud83d\ude00"', True),  # a surrogate pair: one UTF-8 character
    ('"é€😀"'.encode(), True),
    (rb'"\u0000"', False),  # jsonb cannot store U+0000: the general path fails the event
    (rb'"\ud83d"', False),  # a lone surrogate
    (rb'"\ude00\ud83d"', False),
    (rb'"\x"', False),
    (rb'"\u12"', False),
    (b'"\xff"', False),  # invalid UTF-8
    (b'"\xed\xa0\x80"', False),  # an encoded surrogate
    (b'"\xc3"', False),
    (b'"\xe2\x82"', False),
    (b'"\xf4\x90\x80\x80"', False),  # past U+10FFFF
    (b'"\xc0\xaf"', False),  # overlong
    (b'"tab\there"', False),  # a raw control character: not JSON
]


@pytest.mark.parametrize(("text", "served"), STRINGS)
def test_strings(text: bytes, served: bool) -> None:
    lines = [b'{"_time":"2026-11-21T10:00:00Z","v":' + text + b',"a":[' + text + b"]}"] * 3
    assert _compare(lines)["compiled"] == (3 if served else 0)


TIMES = [
    (b'"2026-11-21T10:00:00Z"', True),
    (b'"2026-11-21T10:00:00.1Z"', True),
    (b'"2026-11-21T10:00:00.12345Z"', True),
    (b'"2026-11-21T10:00:00.123456+05:30"', True),
    (b'"2026-11-21T10:00:00-23:59"', True),
    (b'"2026-11-21T10:00:00"', True),  # no offset: UTC
    (b'"2024-02-29T23:59:59.999999Z"', True),
    (b'"2026-11-21T10:00:00.1234567Z"', False),  # seven digits: fromisoformat's own rounding
    (b'"2026-11-21 10:00:00Z"', False),
    (b'"2026-11-21T10:00Z"', False),
    (b'"2026-11-21T10:00:00+0100"', False),
    (b'"2023-02-29T00:00:00Z"', False),  # no such day: the general path words it
    (b'"2026-11-21T24:00:00Z"', False),
    (b'"1969-12-31T23:59:59Z"', False),  # out of range
    (b'"2200-01-01T00:00:00Z"', False),
    (b'"2199-12-31T23:59:59.999999Z"', True),
    (b'"1970-01-01T00:00:00+00:01"', False),  # before 1970 in UTC
    (b'"1790000000"', False),  # a unix time as text
    (b'"yesterday"', False),
    (b"1790000000", True),
    (b"1790000000123", True),
    (b"1790000000123456", True),
    (b"1790000000123456789", False),  # 19 digits
    (b"179000000012345678", True),
    (b"1790000000.5", True),
    (b"1790000000.0000005", True),  # rounds half to even as Python's round() does
    (b"1790000000123.25", True),
    (b"0", True),
    (b"-1", False),
    (b"1.7e9", True),  # read, not stored: any JSON number
    (b"true", False),
    (b"null", False),
    (b'{"at":1}', False),
    (b"{}", False),
    (b"[]", False),
]


@pytest.mark.parametrize(("time", "served"), TIMES)
def test_times(time: bytes, served: bool) -> None:
    lines = [b'{"n":1,"_time":' + time + b',"v":"x"}'] * 3
    assert _compare(lines)["compiled"] == (3 if served else 0)


@pytest.mark.parametrize(
    ("event", "field", "served"),
    [
        (b'{"a":{"b":"2026-11-21T10:00:00Z","c":1},"d":2}', "a.b", True),
        (b'{"a.b":"2026-11-21T10:00:00Z","a":{"b":"2026-11-22T10:00:00Z"}}', "a.b", True),  # top level first
        (b'{"a":{"b":"2026-11-22T10:00:00Z"},"a.b":"2026-11-21T10:00:00Z"}', "a.b", False),
        (b'{"a":{"b":{}},"c":1}', "a.b", False),  # the timestamp is an empty object: a failure
        (b'{"a":{"b":{"c":1}},"d":1}', "a.b", True),  # names an object: flattened, the event stamped
        (b'{"_time":"2026-11-21T10:00:00Z","_time":"2026-11-22T10:00:00Z"}', "_time", False),
        (b'{"x":1,"y":{"z":2}}', "_time", True),  # no timestamp: stamped with the arrival time
        (b'{"time":"2026-11-21T10:00:00Z","x":1}', "_time", True),  # stamped; the warning names `time`
        (b'{"a":{"b":1},"a.b":2}', "_time", False),  # two keys, one path
        (b'{"a":[{"k":1,"k":2}]}', "_time", False),
        (b'{"a":[{"k":1,"j":{"k":2}}],"e":{}}', "_time", True),
        (b'  {"a" : 1 ,\r\n "b" : [ 1 , { } , [ ] ] }  ', "_time", True),
        (b'{"a":1}x', "_time", False),
        (b'{"a":1,}', "_time", False),
        (b'{"k\\u0069":1}', "_time", False),  # an escaped key
        (b"[1]", "_time", False),
        (b"", "_time", True),  # blank: skipped by both
        (b"   ", "_time", False),
    ],
)
def test_events(event: bytes, field: str, served: bool) -> None:
    result = _compare([event] * 3, timestamp_field=field)
    assert result["compiled"] == (3 if served and event.strip() else 0)


def test_size_and_day_bounds() -> None:
    # Flattening can make an event longer than it was: the bound applies to what is stored.
    wide = _line({"_time": "2026-11-21T10:00:00Z", "a" * 300: {f"k{i}": 1 for i in range(8)}})
    assert len(wide) < 2_000  # the builders' bound; flattened, it is over 2,400 bytes
    result = _compare([wide] * 3)
    assert result["compiled"] == 0 and result["failed"] == 3
    assert "larger than" in result["failures"][0][1]
    days = [_line({"_time": f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T00:00:00Z", "n": i}) for i in range(120)]
    result = _compare(days)
    assert result["failed"] == 20 and result["compiled"] == 100  # the 101st day on: the general path fails them


def test_alternating_and_many_shapes() -> None:
    lines = [_line({f"k{i % 11}": {"v": i}, "n": i, "_time": "2026-11-21T10:00:00Z"}) for i in range(100)]
    assert _compare(lines)["compiled"] == 100


def test_lines_as_memoryviews_and_bytearrays() -> None:
    line = _line(BENCH_LIKE)
    for kind in (bytearray, memoryview):
        general = _run([line] * 4, plans=False)
        compiled = _run([kind(line) for _ in range(4)], plans=False, compiled=True)  # type: ignore[misc]
        assert compiled["payload"] == general["payload"] and compiled["compiled"] == 4


_keys = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=12,
)
_times = st.one_of(
    st.integers(min_value=-10, max_value=2**62),
    st.floats(min_value=-1, max_value=1e19),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.sampled_from(["2026-11-21T10:00:00.5+01:00", "2026-11-21T10:00:00", "x"]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(st.dictionaries(_keys, _values, max_size=5), min_size=1, max_size=6),
    times=st.lists(st.none() | _times, min_size=1, max_size=6),
    pretty=st.booleans(),
)
def test_any_events(events: list[dict[str, Any]], times: list[Any], pretty: bool) -> None:
    lines = []
    for i, event in enumerate(events):
        time = times[i % len(times)]
        if time is not None:
            event = {**event, "_time": time}
        # json.dumps writes escapes (ensure_ascii) and spaces that msgspec does not: both are read.
        lines.append(json.dumps(event, indent=1).encode() if pretty else msgspec.json.encode(event))
    _compare(lines * 2, split=3)

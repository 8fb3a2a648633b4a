"""Rendering values and naming column types; the query body's time bounds."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from app.errors import BeaconError
from app.query.compiler import Layout
from app.query.render import infer_type, render_time, render_times, render_timespan, table_result
from app.query.timerange import time_range

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(2026, 11, 21, 8, 15, 30, 123000, tzinfo=UTC), "2026-11-21T08:15:30.123Z"),
        (datetime(2026, 11, 21, 8, 15, 30, tzinfo=UTC), "2026-11-21T08:15:30.000Z"),
        (datetime(2026, 11, 21, 8, 15, 30, 123456, tzinfo=UTC), "2026-11-21T08:15:30.123456Z"),
        (datetime(2026, 11, 21, 10, 15, 30, tzinfo=timezone(timedelta(hours=2))), "2026-11-21T08:15:30.000Z"),
    ],
)
def test_render_time(value: datetime, text: str) -> None:
    assert render_time(value) == text
    assert render_times([value, None]) == [text, None]


def test_render_times_of_a_column_match_one_by_one() -> None:
    base = datetime(2026, 11, 21, 23, 59, 59, tzinfo=UTC)
    column = [base + timedelta(microseconds=us) for us in (0, 1, 999, 1000, 123000, 999999, 1000000)]
    column += [None, datetime(1970, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, 3, 4, 5, 6000)]  # the last one naive
    mixed = [*column, datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))]
    for values in (column, mixed):
        assert render_times(values) == [None if v is None else render_time(v) for v in values]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(minutes=5), "00:05:00"),
        (timedelta(days=1, hours=2), "1.02:00:00"),
        (timedelta(seconds=1.5), "00:00:01.500000"),
        (timedelta(minutes=-90), "-01:30:00"),
        (timedelta(0), "00:00:00"),
    ],
)
def test_render_timespan(value: timedelta, text: str) -> None:
    assert render_timespan(value) == text


@pytest.mark.parametrize(
    ("values", "name"),
    [
        (["a", None, "b"], "string"),
        ([1, 2, None], "long"),
        ([1, 2.5], "real"),
        ([True, False], "bool"),
        ([1, "a"], "dynamic"),
        ([True, 1], "dynamic"),  # a bool is not a number here
        ([[1], {"a": 1}], "dynamic"),
        ([None, None], "dynamic"),
        ([], "dynamic"),
    ],
)
def test_infer_type(values: list[object], name: str) -> None:
    assert infer_type(values) == name


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (None, None, (None, NOW)),
        ("now-1h", None, (NOW - timedelta(hours=1), NOW)),
        ("now - 90m", "now-30m", (NOW - timedelta(minutes=90), NOW - timedelta(minutes=30))),
        ("2026-11-20T00:00:00Z", "now+1d", (datetime(2026, 11, 20, tzinfo=UTC), NOW + timedelta(days=1))),
        ("2026-11-21T10:00:00+02:00", None, (datetime(2026, 11, 21, 8, tzinfo=UTC), NOW)),
        ("now-1.5h", None, (NOW - timedelta(hours=1.5), NOW)),
    ],
)
def test_time_range(start: str | None, end: str | None, expected: tuple[datetime | None, datetime]) -> None:
    assert time_range(start, end, NOW) == expected


@pytest.mark.parametrize(
    ("start", "end", "param"),
    [
        ("yesterday", None, "start_time"),
        ("2026-11-21T10:00:00", None, "start_time"),  # no offset
        ("2026-11-21", None, "start_time"),
        (None, "now-1y", "end_time"),
        ("now", "now", "start_time"),  # empty range
        ("now+1h", None, "start_time"),  # after the default end
    ],
)
def test_time_range_errors(start: str | None, end: str | None, param: str) -> None:
    with pytest.raises(BeaconError) as info:
        time_range(start, end, NOW)
    assert info.value.code == "invalid_field" and info.value.param == param


def test_render_times_of_random_columns_match_one_by_one() -> None:
    # Fractions that end in zeros (.5, .12, .000500) and whole seconds, mixed in one column.
    rng = random.Random(7)
    base = datetime(2026, 11, 21, tzinfo=UTC)
    micros = [0, 500, 1000, 100000, 120000, 500000, 999000, 999999, 10, 123456]
    for _ in range(200):
        values: list[datetime | None] = [
            base + timedelta(seconds=rng.randrange(86400 * 400), microseconds=rng.choice(micros))
            for _ in range(rng.randrange(1, 30))
        ]
        values += [None] * rng.randrange(2)
        rng.shuffle(values)
        assert render_times(values) == [None if v is None else render_time(v) for v in values]


RAW = Layout(raw=True, columns=())


def _expected(events: list[dict[str, Any]]) -> tuple[list[dict[str, str]], list[list[Any]]]:
    names = sorted(set().union(*events))
    columns = [[event.get(name) for event in events] for name in names]
    return (
        [{"name": name, "type": infer_type(values)} for name, values in zip(names, columns, strict=True)],
        [[event.get(name) for name in names] for event in events],
    )


@pytest.mark.parametrize(
    "events",
    [
        [{"a": 1, "b": "x"}, {"a": 2.5, "b": "y"}],  # one shape
        [{"a": 1, "b": "x"}, {"a": 2}],  # a later event lacks a field
        [{"a": 1}, {"a": 2, "b": "late"}, {"c": None}],  # later events add fields
        [{"a": None, "b": [1, {"c": 2}]}, {"a": {"d": True}, "b": []}],  # nulls, arrays, objects
        [{"": 1, "f0": 2, "f1": 3, 'q"uote': 4, "back\\slash": 5, "tab\there": 6, "é€😀": 7}] * 3,
        [{"big": 123456789012345678901234567890, "neg": -9223372036854775809, "one": 1, "onef": 1.0}],
        [{}, {}],
        [{}, {"a": 1}],
    ],
)
def test_event_fields_become_columns(events: list[dict[str, Any]]) -> None:
    # Each field present in any event is a column, null where absent, whether the events come parsed (the read
    # pool's JSONB) or as JSON text (monitors' connections).
    expected = _expected(events)
    for records, layout in (
        ([(json.dumps(event),) for event in events], RAW),
        ([(event,) for event in events], Layout(raw=True, columns=(), json_text=False)),
    ):
        columns, rows = table_result(records, layout)
        assert (columns, [list(row) for row in rows]) == expected
        assert [type(v) for row in rows for v in row] == [type(v) for row in expected[1] for v in row]

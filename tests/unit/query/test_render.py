"""Rendering values and naming column types; the query body's time bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.errors import BeaconError
from app.query.render import infer_type, render_time, render_times, render_timespan
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

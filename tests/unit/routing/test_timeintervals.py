"""Time intervals: each field, negative days of the month, ranges over midnight, time zones and DST."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from app.errors import BeaconError
from app.routing import document as d
from app.routing.timeintervals import compile_time_interval


def interval(**fields):
    return compile_time_interval(msgspec.convert({"name": "x", "intervals": [fields]}, d.TimeInterval), "ti[0]")


def utc(*args):
    return datetime(*args, tzinfo=UTC)


def test_times_and_weekdays_in_a_zone():
    office = interval(
        times=[{"start_time": "09:00", "end_time": "17:00"}], weekdays=["monday:friday"], location="America/New_York"
    )
    assert office.contains(utc(2026, 1, 7, 14, 0))  # Wednesday 09:00 in New York (UTC-5)
    assert not office.contains(utc(2026, 1, 7, 13, 59))  # 08:59 there
    assert not office.contains(utc(2026, 1, 7, 22, 0))  # 17:00 there: the end is exclusive
    assert not office.contains(utc(2026, 1, 10, 15, 0))  # Saturday
    assert office.contains(utc(2026, 7, 8, 13, 0))  # July, UTC-4: 09:00 there


def test_nights_over_midnight_belong_to_the_day_they_start_and_follow_dst():
    nights = interval(
        times=[{"start_time": "22:00", "end_time": "07:00"}], weekdays=["monday:friday"], location="Europe/Berlin"
    )
    assert nights.contains(utc(2026, 1, 5, 21, 0))  # Monday 22:00 CET
    assert nights.contains(utc(2026, 1, 10, 5, 59))  # Saturday 06:59: Friday's night
    assert not nights.contains(utc(2026, 1, 10, 6, 0))  # Saturday 07:00
    assert not nights.contains(utc(2026, 1, 5, 2, 0))  # Monday 03:00 is Sunday's night
    assert not nights.contains(utc(2026, 1, 6, 20, 59))  # Tuesday 21:59
    # Clocks go forward in Berlin on Sunday 2026-03-29 at 02:00 CET; the Monday after is CEST (UTC+2).
    assert nights.contains(utc(2026, 3, 31, 4, 59))  # Tuesday 06:59 CEST
    assert not nights.contains(utc(2026, 3, 31, 5, 0))  # Tuesday 07:00 CEST (it would be 06:00 in CET)
    assert nights.contains(utc(2026, 3, 27, 5, 59))  # Friday 06:59 CET, before the change
    assert not nights.contains(utc(2026, 3, 27, 6, 0))


def test_the_dst_night_itself():
    # Every day, 01:00-04:00 Berlin wall time. On 2026-03-29 02:00-03:00 does not exist: the span is 2 hours.
    early = interval(times=[{"start_time": "01:00", "end_time": "04:00"}], location="Europe/Berlin")
    assert early.contains(utc(2026, 3, 29, 0, 0))  # 01:00 CET
    assert early.contains(utc(2026, 3, 29, 1, 0))  # 03:00 CEST (02:00 CET never happened)
    assert not early.contains(utc(2026, 3, 29, 2, 0))  # 04:00 CEST
    # On 2026-10-25 clocks go back at 03:00 CEST: 02:00-03:00 happens twice, the span is 4 hours.
    assert early.contains(utc(2026, 10, 24, 23, 0))  # 01:00 CEST
    assert early.contains(utc(2026, 10, 25, 2, 30))  # 03:30 CET
    assert not early.contains(utc(2026, 10, 25, 3, 0))  # 04:00 CET


def test_days_of_month_months_years():
    last_days = interval(days_of_month=["-3:-1"])
    assert last_days.contains(utc(2026, 2, 26, 12)) and last_days.contains(utc(2026, 2, 28, 12))
    assert not last_days.contains(utc(2026, 2, 25, 12))
    assert last_days.contains(utc(2028, 2, 27, 12)) and not last_days.contains(utc(2028, 2, 26, 12))  # leap year
    first = interval(days_of_month=["1", "15"], months=["january:march", "12"], years=["2026"])
    assert first.contains(utc(2026, 2, 15, 0)) and first.contains(utc(2026, 12, 1, 0))
    assert not first.contains(utc(2026, 4, 1, 0)) and not first.contains(utc(2027, 1, 1, 0))
    assert not first.contains(utc(2026, 1, 2, 0))


def test_whole_day_end_2400():
    day = interval(times=[{"start_time": "00:00", "end_time": "24:00"}], weekdays=["sunday"])
    assert day.contains(utc(2026, 1, 11, 23, 59)) and not day.contains(utc(2026, 1, 12, 0, 0))


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"times": [{"start_time": "25:00", "end_time": "26:00"}]}, "ti[0].intervals[0].times[0].start_time"),
        ({"times": [{"start_time": "09:00", "end_time": "9"}]}, "ti[0].intervals[0].times[0].end_time"),
        ({"times": [{"start_time": "09:00", "end_time": "09:00"}]}, "ti[0].intervals[0].times[0]"),
        ({"weekdays": ["monday", "funday"]}, "ti[0].intervals[0].weekdays[1]"),
        ({"weekdays": ["friday:monday"]}, "ti[0].intervals[0].weekdays[0]"),
        ({"days_of_month": ["0"]}, "ti[0].intervals[0].days_of_month[0]"),
        ({"days_of_month": ["-40"]}, "ti[0].intervals[0].days_of_month[0]"),
        ({"months": ["13"]}, "ti[0].intervals[0].months[0]"),
        ({"years": ["twenty"]}, "ti[0].intervals[0].years[0]"),
        ({"location": "Mars/Olympus"}, "ti[0].intervals[0].location"),
    ],
)
def test_errors_name_the_field(fields, param):
    with pytest.raises(BeaconError) as info:
        interval(**fields)
    assert info.value.param == param

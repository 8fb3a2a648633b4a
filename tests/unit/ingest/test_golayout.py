"""Go reference-time layouts: a table of layouts, values and the instants they mean (as Go's time.Parse)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.ingest.golayout import FRAC9, LONG_YEAR, MONTH, ZERO_MONTH, Element, compile_layout
from app.ingest.goparse import LayoutError, parse

NOW = datetime(2026, 11, 21, 20, 0, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


CASES = [
    # named layouts, by name
    ("RFC3339", "2026-11-21T08:15:30+02:00", "2026-11-21T06:15:30Z"),
    ("RFC3339", "2026-11-21T08:15:30Z", "2026-11-21T08:15:30Z"),
    ("RFC3339Nano", "2026-11-21T08:15:30.123456789Z", "2026-11-21T08:15:30.123456Z"),
    ("RFC3339Nano", "2026-11-21T08:15:30-05:30", "2026-11-21T13:45:30Z"),
    ("RFC1123", "Sat, 21 Nov 2026 08:15:30 GMT", "2026-11-21T08:15:30Z"),
    ("RFC1123", "Sat, 21 Nov 2026 08:15:30 PST", "2026-11-21T16:15:30Z"),
    ("RFC1123Z", "Sat, 21 Nov 2026 08:15:30 -0700", "2026-11-21T15:15:30Z"),
    ("ANSIC", "Sat Nov 21 08:15:30 2026", "2026-11-21T08:15:30Z"),
    ("ANSIC", "Sun Nov  1 08:15:30 2026", "2026-11-01T08:15:30Z"),
    ("UnixDate", "Sat Nov 21 08:15:30 UTC 2026", "2026-11-21T08:15:30Z"),
    ("UnixDate", "Sat Nov 21 08:15:30 CEST 2026", "2026-11-21T06:15:30Z"),
    ("RubyDate", "Sat Nov 21 08:15:30 +0100 2026", "2026-11-21T07:15:30Z"),
    ("RFC822", "21 Nov 26 08:15 UTC", "2026-11-21T08:15:00Z"),
    ("RFC822Z", "21 Nov 26 08:15 -0000", "2026-11-21T08:15:00Z"),
    ("RFC850", "Saturday, 21-Nov-26 08:15:30 EST", "2026-11-21T13:15:30Z"),
    ("Kitchen", "3:04PM", "2026-11-21T15:04:00Z"),  # no date: the arrival date
    ("Stamp", "Nov 21 08:15:30", "2026-11-21T08:15:30Z"),  # no year: the arrival year
    ("StampMilli", "Nov 21 08:15:30.123", "2026-11-21T08:15:30.123Z"),
    ("StampMicro", "Nov 21 08:15:30.123456", "2026-11-21T08:15:30.123456Z"),
    ("StampNano", "Nov 21 08:15:30.123456789", "2026-11-21T08:15:30.123456Z"),
    ("DateTime", "2026-11-21 08:15:30", "2026-11-21T08:15:30Z"),
    ("DateOnly", "2026-11-21", "2026-11-21T00:00:00Z"),
    ("TimeOnly", "08:15:30", "2026-11-21T08:15:30Z"),
    ("Layout", "11/21 08:15:30PM '26 -0100", "2026-11-21T21:15:30Z"),
    ("rfc3339", "2026-11-21T08:15:30Z", "2026-11-21T08:15:30Z"),  # names in any case
    # custom layouts: every element
    ("02/Jan/2006:15:04:05 -0700", "21/Nov/2026:08:15:30 +0000", "2026-11-21T08:15:30Z"),
    ("January 2, 2006 3:04 PM", "November 21, 2026 8:15 AM", "2026-11-21T08:15:00Z"),
    ("Monday, January 2 2006 15:04", "saturday, NOVEMBER 21 2026 08:15", "2026-11-21T08:15:00Z"),
    ("1/2/06 3:4:5 pm", "1/2/26 3:4:5 pm", "2026-01-02T15:04:05Z"),
    ("03:04:05 PM", "12:00:00 AM", "2026-11-21T00:00:00Z"),
    ("03:04:05 PM", "12:30:00 PM", "2026-11-21T12:30:00Z"),
    ("2006-002", "2026-325", "2026-11-21T00:00:00Z"),  # zero-padded day of year
    ("2006-002", "2024-060", "2024-02-29T00:00:00Z"),  # leap year
    ("2006 __2", "2026  45", "2026-02-14T00:00:00Z"),  # space-padded day of year
    ("2006-01-02 002", "2026-11-21 325", "2026-11-21T00:00:00Z"),
    ("_2 Jan 2006", " 1 Nov 2026", "2026-11-01T00:00:00Z"),
    ("x_2006", "x_2026", "2026-01-01T00:00:00Z"),  # `_2006` is a literal `_` then the year
    ("15:04:05,000", "08:15:30,250", "2026-11-21T08:15:30.250Z"),
    ("15:04:05.000000", "08:15:30.000001", "2026-11-21T08:15:30.000001Z"),
    ("2006-01-02 15:04:05.999", "2026-11-21 08:15:30", "2026-11-21T08:15:30Z"),  # .999: fraction optional
    ("2006-01-02 15:04:05.999", "2026-11-21 08:15:30.5", "2026-11-21T08:15:30.500Z"),
    ("2006-01-02 15:04:05", "2026-11-21 08:15:30.25", "2026-11-21T08:15:30.250Z"),  # Go accepts this too
    ("2006-01-02 15 -07", "2026-11-21 08 +05", "2026-11-21T03:00:00Z"),
    ("2006-01-02 15:04 -07:00:00", "2026-11-21 08:15 +05:30:15", "2026-11-21T02:44:45Z"),
    ("2006-01-02 15:04 -070000", "2026-11-21 08:15 -013000", "2026-11-21T09:45:00Z"),
    ("2006-01-02 15:04 Z0700", "2026-11-21 08:15 Z", "2026-11-21T08:15:00Z"),
    ("2006-01-02 15:04 Z0700", "2026-11-21 08:15 +0130", "2026-11-21T06:45:00Z"),
    ("2006-01-02 15:04 Z07", "2026-11-21 08:15 -03", "2026-11-21T11:15:00Z"),
    ("2006-01-02 15:04 Z07:00:00", "2026-11-21 08:15 Z", "2026-11-21T08:15:00Z"),
    ("2006-01-02 15:04 Z070000", "2026-11-21 08:15 +010000", "2026-11-21T07:15:00Z"),
    ("2006-01-02 15:04 MST", "2026-11-21 08:15 GMT+3", "2026-11-21T05:15:00Z"),
    ("Mon Jan 02 2006", "Sat Nov 21 2026", "2026-11-21T00:00:00Z"),
    ("20060102150405", "20261121081530", "2026-11-21T08:15:30Z"),
]


@pytest.mark.parametrize(("layout", "value", "expected"), CASES)
def test_layout_table(layout: str, value: str, expected: str) -> None:
    assert parse(value, compile_layout(layout), NOW) == at(expected)


def test_year_less_stamp_from_last_year() -> None:
    just_after_new_year = datetime(2027, 1, 1, 0, 0, 30, tzinfo=UTC)
    assert parse("Dec 31 23:59:59", compile_layout("Stamp"), just_after_new_year) == at("2026-12-31T23:59:59Z")


def test_time_only_just_before_midnight() -> None:
    just_after_midnight = datetime(2026, 11, 21, 0, 10, tzinfo=UTC)
    assert parse("23:59:00", compile_layout("TimeOnly"), just_after_midnight) == at("2026-11-20T23:59:00Z")


BAD = [
    ("RFC3339", "2026-11-21", "expected"),
    ("RFC3339", "2026-11-21T08:15:30", "UTC offset"),
    ("Jan 2 2006", "Nov 31 2026", "day out of range"),
    ("Jan 2 2006", "Feb 29 2026", "day out of range"),
    ("DateOnly", "2026-13-01", "month out of range"),
    ("TimeOnly", "25:00:00", "hour out of range"),
    ("TimeOnly", "08:60:00", "minute out of range"),
    ("UnixDate", "Sat Nov 21 08:15:30 XYZ 2026", "unknown time zone abbreviation 'XYZ'"),
    ("DateTime", "2026-11-21 08:15:30 trailing", "extra text"),
    ("2006-01-02 002", "2026-11-22 325", "does not match the day"),
    ("2006-002", "2026-366", "day of year out of range"),
    ("02 Jan 2006", "21 Foo 2026", "unknown name"),
    ("15:04:05.000", "08:15:30.12", "3-digit fraction"),
    ("01/02/2006", "1/2/2026", "two digits"),
    ("3:04PM", "3:04XM", "AM or PM"),
]


@pytest.mark.parametrize(("layout", "value", "reason"), BAD)
def test_values_that_do_not_match(layout: str, value: str, reason: str) -> None:
    with pytest.raises(LayoutError, match=reason):
        parse(value, compile_layout(layout), NOW)


def test_tokeniser_follows_go() -> None:
    assert compile_layout("Janet 2006") == ("Janet ", Element(LONG_YEAR))  # `Jan` before a lowercase letter
    assert compile_layout("Jan.999") == (Element(MONTH), Element(FRAC9, 3))
    # `.000` followed by a digit is no fraction: as in Go, the scan goes on and finds `01` (month) in it.
    assert compile_layout("2006.0001") == (Element(LONG_YEAR), ".00", Element(ZERO_MONTH))


@pytest.mark.parametrize("layout", ["hello", "", "yyyy-MM-dd"])
def test_text_without_elements_is_not_a_layout(layout: str) -> None:
    with pytest.raises(ValueError, match="not a Go reference-time layout"):
        compile_layout(layout)

"""Event times: RFC 3339, unix numbers by magnitude, numeric text, layouts, and what fails."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.ingest.timestamps import BadTimestamp, datetime_to_us, make_reader, us_to_datetime

NOW = datetime(2026, 11, 21, 20, 0, tzinfo=UTC)
INSTANT = datetime(2026, 11, 21, 8, 15, 30, 123456, tzinfo=UTC)


def read(value: object, layout: str | None = None) -> datetime:
    return us_to_datetime(make_reader(layout, NOW)(value))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-21T08:15:30.123456Z", INSTANT),
        ("2026-11-21T10:15:30.123456+02:00", INSTANT),
        ("2026-11-21 08:15:30.123456", INSTANT),  # no offset: UTC
        (1_795_248_930, INSTANT.replace(microsecond=0)),  # seconds
        (1_795_248_930.123456, INSTANT),
        (1_795_248_930_123, INSTANT.replace(microsecond=123000)),  # milliseconds
        (1_795_248_930_123_456, INSTANT),  # microseconds
        (1_795_248_930_123_456_789, INSTANT),  # nanoseconds (kept to the microsecond)
        ("1795248930", INSTANT.replace(microsecond=0)),  # numeric text
        ("1795248930123", INSTANT.replace(microsecond=123000)),
        (0, datetime(1970, 1, 1, tzinfo=UTC)),
    ],
)
def test_default_forms(value: object, expected: datetime) -> None:
    assert read(value) == expected


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("yesterday", "not RFC 3339 or a unix time"),
        ("", "not RFC 3339"),
        (True, "a boolean"),
        (None, "null"),
        ({"t": 1}, "an object"),
        ([1], "an array"),
        (-5, "outside the accepted range"),
        ("2300-01-01T00:00:00Z", "outside the accepted range"),
    ],
)
def test_unreadable(value: object, reason: str) -> None:
    with pytest.raises(BadTimestamp, match=reason):
        read(value)


def test_layout_applies_to_text_and_numbers_stay_unix() -> None:
    assert read("21/Nov/2026:10:15:30 +0200", "02/Jan/2006:15:04:05 -0700") == INSTANT.replace(microsecond=0)
    assert read(1_795_248_930, "02/Jan/2006:15:04:05 -0700") == INSTANT.replace(microsecond=0)
    with pytest.raises(BadTimestamp, match="does not match the layout"):
        read("2026-11-21T08:15:30Z", "02/Jan/2006:15:04:05 -0700")


def test_not_a_layout_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="not a Go reference-time layout"):
        make_reader("dd/mm/yyyy", NOW)


def test_round_trip_microseconds() -> None:
    assert us_to_datetime(datetime_to_us(INSTANT)) == INSTANT

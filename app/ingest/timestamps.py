"""Event time: RFC 3339 text, unix time numbers (unit from magnitude) or text in a Go reference-time layout.

Times are returned as integer microseconds since the unix epoch (PostgreSQL keeps microseconds), which is
also what the binary COPY encoder needs, so no datetime object is built for a number.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from app.ingest import golayout, goparse

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_US = timedelta(microseconds=1)
DAY_US = 86_400_000_000
MINUTE_US = 60_000_000
# Accepted event times. Every distinct day becomes a partition, so a bound keeps a stray value (a year 40000
# timestamp, a counter mistaken for a time) from creating partitions nobody wants.
MIN_US = 0  # 1970-01-01
MAX_US = (datetime(2200, 1, 1, tzinfo=UTC) - EPOCH) // ONE_US

TimeReader = Callable[[Any], int]


class BadTimestamp(ValueError):
    """The event's timestamp cannot be read; the message is shown in `failures`."""


def datetime_to_us(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - EPOCH) // ONE_US


def us_to_datetime(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


def _checked(us: int, raw: Any) -> int:
    if not MIN_US <= us < MAX_US:
        raise BadTimestamp(f"timestamp {raw!r} is outside the accepted range (1970 to 2199)")
    return us


def number_to_us(value: int | float) -> int:
    """Unix time in seconds, milliseconds, microseconds or nanoseconds, told apart by magnitude."""
    size = abs(value)
    if isinstance(value, int):
        if size < 100_000_000_000:  # below 1e11: seconds (until the year 5138)
            us = value * 1_000_000
        elif size < 100_000_000_000_000:
            us = value * 1_000
        elif size < 100_000_000_000_000_000:
            us = value
        else:
            us = value // 1_000
    else:
        if value != value or size == float("inf"):
            raise BadTimestamp(f"timestamp {value!r} is not a number of seconds")
        if size < 1e11:
            us = round(value * 1e6)
        elif size < 1e14:
            us = round(value * 1e3)
        elif size < 1e17:
            us = round(value)
        else:
            us = round(value / 1e3)
    return _checked(us, value)


def _numeric_text(text: str) -> int | float | None:
    stripped = text.lstrip("-")
    if stripped.isascii() and stripped.isdigit():
        return int(text)
    head, dot, tail = stripped.partition(".")
    if dot and head.isascii() and head.isdigit() and tail.isascii() and tail.isdigit():
        return float(text)
    return None


def text_to_us(text: str) -> int:
    """RFC 3339 (an ISO 8601 time without an offset is read as UTC), or a unix time written as text."""
    number = _numeric_text(text)
    if number is not None:
        return number_to_us(number)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadTimestamp(f"timestamp {text[:64]!r} is not RFC 3339 or a unix time") from None
    return _checked(datetime_to_us(parsed), text)


_fromisoformat = datetime.fromisoformat


def default_reader(value: Any) -> int:
    """RFC 3339 text, a unix time as text or a number (app/ingest/_fastrows.c reads the common forms the same way)."""
    kind = type(value)
    if kind is str:
        if len(value) > 9 and value[4] == "-":  # the common case, RFC 3339, straight to the C parser
            try:
                parsed = _fromisoformat(value)
            except ValueError:
                raise BadTimestamp(f"timestamp {value[:64]!r} is not RFC 3339 or a unix time") from None
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            us = (parsed - EPOCH) // ONE_US
            if MIN_US <= us < MAX_US:
                return us
            return _checked(us, value)
        return text_to_us(value)
    if kind is int or kind is float:
        return number_to_us(value)
    raise BadTimestamp(f"timestamp must be a string or a number, got {_json_type(value)}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def make_reader(layout: str | None, now: datetime) -> TimeReader:
    """A function from a timestamp value to microseconds; it raises BadTimestamp with the reason.

    `layout` (a Go reference-time layout or a Go layout name) applies to text values; numbers are always
    unix times. Raises ValueError at once when `layout` is not a layout at all.
    """
    if layout is None:
        return default_reader
    chunks = golayout.compile_layout(layout)

    def read(value: Any) -> int:
        kind = type(value)
        if kind is int or kind is float:
            return number_to_us(value)
        if kind is not str:
            raise BadTimestamp(f"timestamp must be a string or a number, got {_json_type(value)}")
        try:
            parsed = goparse.parse(value, chunks, now)
        except goparse.LayoutError as exc:
            raise BadTimestamp(f"timestamp {value[:64]!r} does not match the layout {layout!r}: {exc}") from None
        return _checked(datetime_to_us(parsed), value)

    return read

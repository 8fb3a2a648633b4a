"""Parsing a value by a compiled Go layout (golayout.py), following Go's `time.Parse` (differences noted there)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from app.ingest.golayout import (
    DATE_ELEMENTS,
    DAY,
    DAYS_BEFORE,
    FRAC0,
    FRAC9,
    HOUR,
    HOUR12,
    ISO_TZ,
    LONG_MONTH,
    LONG_WEEKDAY,
    LONG_YEAR,
    MINUTE,
    MONTH,
    MONTH_NAMES,
    NUM_MONTH,
    NUM_TZ,
    PM_LOWER,
    PM_UPPER,
    SECOND,
    TZ,
    UNDER_DAY,
    UNDER_YEARDAY,
    WEEKDAY,
    WEEKDAY_NAMES,
    YEAR,
    ZERO_DAY,
    ZERO_HOUR12,
    ZERO_MINUTE,
    ZERO_MONTH,
    ZERO_SECOND,
    ZERO_YEARDAY,
    ZONE_OFFSETS,
    Chunk,
    Element,
)


class LayoutError(ValueError):
    """The value does not match the layout (the message says where and why)."""


def _skip(value: str, prefix: str) -> str:
    """Go's `skip`: match a literal; a space in the layout matches any run of spaces in the value."""
    while prefix:
        if prefix[0] == " ":
            if value and value[0] != " ":
                raise LayoutError(f"expected {prefix!r} at {value!r}")
            prefix = prefix.lstrip(" ")
            value = value.lstrip(" ")
            continue
        if not value or value[0] != prefix[0]:
            raise LayoutError(f"expected {prefix!r} at {value!r}")
        prefix, value = prefix[1:], value[1:]
    return value


def _getnum(value: str, fixed: bool) -> tuple[int, str]:
    if not value or not value[0].isdigit() or not value[0].isascii():
        raise LayoutError(f"expected a number at {value!r}")
    if len(value) < 2 or not value[1].isdigit() or not value[1].isascii():
        if fixed:
            raise LayoutError(f"expected two digits at {value!r}")
        return int(value[0]), value[1:]
    return int(value[:2]), value[2:]


def _getnum3(value: str, fixed: bool) -> tuple[int, str]:
    n = 0
    i = 0
    while i < 3 and i < len(value) and value[i].isascii() and value[i].isdigit():
        n = n * 10 + int(value[i])
        i += 1
    if i == 0 or (fixed and i != 3):
        raise LayoutError(f"expected a day of year at {value!r}")
    return n, value[i:]


def _lookup(names: Sequence[str], value: str, length: int | None) -> tuple[int, str]:
    """Index of the name (or its first `length` letters) that starts `value`, case-insensitively."""
    for i, name in enumerate(names):
        candidate = name if length is None else name[:length]
        if value[: len(candidate)].lower() == candidate.lower():
            return i, value[len(candidate) :]
    raise LayoutError(f"unknown name at {value!r}")


def _digits(value: str, count: int) -> int:
    part = value[:count]
    if len(part) != count or not (part.isascii() and part.isdigit()):
        raise LayoutError(f"expected {count} digits at {value!r}")
    return int(part)


def _fraction_us(digits: str) -> tuple[int, int]:
    """(microseconds, nanoseconds remainder) of a run of fractional digits (beyond 9 are ignored, as in Go)."""
    digits = (digits[:9]).ljust(9, "0")
    nanos = int(digits)
    return nanos // 1000, nanos % 1000


def _parse_numeric_zone(code: str, value: str) -> tuple[int, str]:
    if code.startswith("Z") and value[:1] == "Z":
        return 0, value[1:]
    if not value or value[0] not in "+-":
        raise LayoutError(f"expected a UTC offset at {value!r}")
    sign = -1 if value[0] == "-" else 1
    body = code[1:]  # e.g. 07:00, 0700, 07
    hh = _digits(value[1:], 2)
    pos = 3
    mm = ss = 0
    if body in ("0700", "070000"):
        mm = _digits(value[pos:], 2)
        pos += 2
        if body == "070000":
            ss = _digits(value[pos:], 2)
            pos += 2
    elif body in ("07:00", "07:00:00"):
        if value[pos : pos + 1] != ":":
            raise LayoutError(f"expected ':' in the offset {value!r}")
        mm = _digits(value[pos + 1 :], 2)
        pos += 3
        if body == "07:00:00":
            if value[pos : pos + 1] != ":":
                raise LayoutError(f"expected ':' in the offset {value!r}")
            ss = _digits(value[pos + 1 :], 2)
            pos += 3
    if hh > 24 or mm > 59 or ss > 59:
        raise LayoutError(f"UTC offset out of range in {value!r}")
    return sign * (hh * 3600 + mm * 60 + ss), value[pos:]


def _parse_zone_name(value: str) -> tuple[int, str]:
    """A zone abbreviation (`PST`, `CEST`, `UTC`, `GMT+3`): its offset in seconds and the rest of the value."""
    if value.startswith(("GMT+", "GMT-", "UTC+", "UTC-")):
        sign = -1 if value[3] == "-" else 1
        i = 4
        while i < len(value) and i < 6 and value[i].isascii() and value[i].isdigit():
            i += 1
        if i == 4:
            raise LayoutError(f"bad offset in {value!r}")
        hours = int(value[4:i])
        if hours > 14:
            raise LayoutError(f"UTC offset out of range in {value!r}")
        return sign * hours * 3600, value[i:]
    i = 0
    while i < len(value) and value[i].isascii() and value[i].isalpha():
        i += 1
    name = value[:i]
    if name in ZONE_OFFSETS:
        return ZONE_OFFSETS[name], value[i:]
    if not name:
        raise LayoutError(f"expected a time zone at {value!r}")
    raise LayoutError(f"unknown time zone abbreviation {name!r}; use a layout with a numeric offset such as -0700")


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in(month: int, year: int) -> int:
    if month == 2 and _is_leap(year):
        return 29
    return DAYS_BEFORE[month] - DAYS_BEFORE[month - 1]


def parse(value: str, chunks: tuple[Chunk, ...], now: datetime) -> datetime:
    """Parse `value` by a compiled layout into an aware UTC datetime; LayoutError says why not."""
    year: int | None = None
    month = day = yday = -1
    hour = minute = second = micro = 0
    pm: bool | None = None
    offset: int | None = None
    rest = value
    for idx, chunk in enumerate(chunks):
        if isinstance(chunk, str):
            rest = _skip(rest, chunk)
            continue
        code = chunk.code
        if code == LONG_YEAR:
            year = _digits(rest, 4)
            rest = rest[4:]
        elif code == YEAR:
            y = _digits(rest, 2)
            year = y + (1900 if y >= 69 else 2000)
            rest = rest[2:]
        elif code == LONG_MONTH:
            m, rest = _lookup(MONTH_NAMES, rest, None)
            month = m + 1
        elif code == MONTH:
            m, rest = _lookup(MONTH_NAMES, rest, 3)
            month = m + 1
        elif code in (NUM_MONTH, ZERO_MONTH):
            month, rest = _getnum(rest, code == ZERO_MONTH)
            if not 1 <= month <= 12:
                raise LayoutError(f"month out of range in {value!r}")
        elif code == LONG_WEEKDAY:
            _, rest = _lookup(WEEKDAY_NAMES, rest, None)
        elif code == WEEKDAY:
            _, rest = _lookup(WEEKDAY_NAMES, rest, 3)
        elif code in (DAY, UNDER_DAY, ZERO_DAY):
            if code == UNDER_DAY and rest[:1] == " ":
                rest = rest[1:]
            day, rest = _getnum(rest, code == ZERO_DAY)
        elif code in (UNDER_YEARDAY, ZERO_YEARDAY):
            for _ in range(2):
                if code == UNDER_YEARDAY and rest[:1] == " ":
                    rest = rest[1:]
            yday, rest = _getnum3(rest, code == ZERO_YEARDAY)
        elif code == HOUR:
            hour, rest = _getnum(rest, False)
            if hour > 23:
                raise LayoutError(f"hour out of range in {value!r}")
        elif code in (HOUR12, ZERO_HOUR12):
            hour, rest = _getnum(rest, code == ZERO_HOUR12)
            if hour > 12:
                raise LayoutError(f"hour out of range in {value!r}")
        elif code in (MINUTE, ZERO_MINUTE):
            minute, rest = _getnum(rest, code == ZERO_MINUTE)
            if minute > 59:
                raise LayoutError(f"minute out of range in {value!r}")
        elif code in (SECOND, ZERO_SECOND):
            second, rest = _getnum(rest, code == ZERO_SECOND)
            if second > 59:
                raise LayoutError(f"second out of range in {value!r}")
            # Go accepts a fraction after the seconds even when the layout has none.
            following = next((c for c in chunks[idx + 1 :] if isinstance(c, Element)), None)
            has_frac = following is not None and following.code in (FRAC0, FRAC9)
            if not has_frac and len(rest) >= 2 and rest[0] in ".," and rest[1].isdigit():
                n = 1
                while n < len(rest) and rest[n].isascii() and rest[n].isdigit():
                    n += 1
                micro, _ = _fraction_us(rest[1:n])
                rest = rest[n:]
        elif code == FRAC0:
            n = chunk.digits
            if (
                len(rest) < n + 1
                or rest[0] not in ".,"
                or not (rest[1 : n + 1].isascii() and rest[1 : n + 1].isdigit())
            ):
                raise LayoutError(f"expected a {n}-digit fraction of a second at {rest!r}")
            micro, _ = _fraction_us(rest[1 : n + 1])
            rest = rest[n + 1 :]
        elif code == FRAC9:
            if len(rest) < 2 or rest[0] not in ".," or not rest[1].isdigit():
                continue  # the fraction is optional
            n = 1
            while n < len(rest) and rest[n].isascii() and rest[n].isdigit():
                n += 1
            micro, _ = _fraction_us(rest[1:n])
            rest = rest[n:]
        elif code == PM_UPPER or code == PM_LOWER:
            word = rest[:2]
            expected = ("AM", "PM") if code == PM_UPPER else ("am", "pm")
            if word not in expected:
                raise LayoutError(f"expected {expected[0]} or {expected[1]} at {rest!r}")
            pm = word == expected[1]
            rest = rest[2:]
        elif code in NUM_TZ or code in ISO_TZ:
            offset, rest = _parse_numeric_zone(code, rest)
        elif code == TZ:
            offset, rest = _parse_zone_name(rest)
    if rest:
        raise LayoutError(f"extra text {rest!r} after the timestamp")
    if pm is True and hour < 12:
        hour += 12
    elif pm is False and hour == 12:
        hour = 0
    return _assemble(value, year, month, day, yday, hour, minute, second, micro, offset, now, chunks)


def _assemble(
    value: str,
    year: int | None,
    month: int,
    day: int,
    yday: int,
    hour: int,
    minute: int,
    second: int,
    micro: int,
    offset: int | None,
    now: datetime,
    chunks: tuple[Chunk, ...],
) -> datetime:
    codes = {c.code for c in chunks if isinstance(c, Element)}
    tz_now = now.astimezone(UTC)
    has_date = bool(codes & DATE_ELEMENTS)
    inferred_year = year is None
    if year is None:
        year = tz_now.year
    if not has_date and inferred_year:
        month, day = tz_now.month, tz_now.day
    if yday >= 0:
        m = 0
        d = 0
        if _is_leap(year):
            if yday == 31 + 29:
                m, d = 2, 29
            elif yday > 31 + 29:
                yday -= 1
        if yday < 1 or yday > 365:
            raise LayoutError(f"day of year out of range in {value!r}")
        if m == 0:
            m = (yday - 1) // 31 + 1
            if DAYS_BEFORE[m] < yday:
                m += 1
            d = yday - DAYS_BEFORE[m - 1]
        if month >= 0 and month != m:
            raise LayoutError(f"day of year does not match the month in {value!r}")
        if day >= 0 and day != d:
            raise LayoutError(f"day of year does not match the day in {value!r}")
        month, day = m, d
    else:
        if month < 0:
            month = 1
        if day < 0:
            day = 1
    if not 1 <= year <= 9999 or day < 1 or day > _days_in(month, year):
        raise LayoutError(f"day out of range in {value!r}")
    result = datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC) - timedelta(seconds=offset or 0)
    if inferred_year and not has_date and result > tz_now + timedelta(hours=1):
        result -= timedelta(days=1)  # a time-of-day stamp from just before midnight, read just after it
    elif inferred_year and has_date and result > tz_now + timedelta(days=1):
        # A year-less stamp from late December read in early January belongs to last year.
        if month == 2 and day == 29 and not _is_leap(year - 1):
            raise LayoutError(f"day out of range in {value!r}")
        result = result.replace(year=year - 1)
    return result

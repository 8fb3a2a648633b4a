"""Time intervals (Alertmanager's fields): `times`, `weekdays`, `days_of_month` (negative: from the month's end),
`months`, `years`, `location` (an IANA zone, through `zoneinfo`). An interval holds when every field it sets
holds at the instant, read as wall-clock time in its location; a named time interval holds when any of its
intervals does.

One extension: a time range whose end is before its start (`22:00`–`07:00`) runs over midnight, and the part
after midnight belongs to the day it started on, so `weekdays: ["monday:friday"]` with 22:00–07:00 holds from
Monday 22:00 to Saturday 07:00 (Friday night included, Sunday night not). Wall-clock reading makes DST work
as people expect: 22:00–07:00 in Europe/Berlin is 9 hours on the night clocks go forward and 10 on the one
they go back.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from app.errors import BeaconError
from app.routing import document as d

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = tuple(calendar.month_name[i].lower() for i in range(1, 13))
Ranges = tuple[tuple[int, int], ...]


def _bad(param: str, message: str) -> BeaconError:
    return BeaconError("invalid_field", message, param=param)


def _minutes(text: str, param: str, *, end: bool) -> int:
    hours, sep, minutes = text.partition(":")
    if not (sep and hours.isdigit() and minutes.isdigit() and len(minutes) == 2 and 1 <= len(hours) <= 2):
        raise _bad(param, f"{text!r} is not a time of day as HH:MM.")
    value = int(hours) * 60 + int(minutes)
    if int(minutes) > 59 or value > 24 * 60 or (value == 24 * 60 and not end):
        raise _bad(param, f"{text!r} is not a time of day (00:00 to 23:59; an end may be 24:00).")
    return value


def _ranges(items: list[str], param: str, parse: Callable[[str, str], int]) -> Ranges:
    found = []
    for i, item in enumerate(items):
        where = f"{param}[{i}]"
        first, sep, last = item.partition(":")
        start = parse(first.strip(), where)
        stop = parse(last.strip(), where) if sep else start
        if (start >= 0) == (stop >= 0) and start > stop:
            raise _bad(where, f"{item!r}: the range's start is after its end.")
        found.append((start, stop))
    return tuple(found)


def _named(names: tuple[str, ...], kind: str, base: int) -> Callable[[str, str], int]:
    def parse(text: str, where: str) -> int:
        lowered = text.lower()
        if lowered in names:
            return names.index(lowered) + base
        if kind == "month" and lowered.isdigit() and 1 <= int(lowered) <= 12:
            return int(lowered)
        raise _bad(where, f"{text!r} is not a {kind} ({', '.join(names)}).")

    return parse


def _day_of_month(text: str, where: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0 or not -31 <= value <= 31:
        raise _bad(where, f"{text!r} is not a day of the month (1 to 31, or -1 to -31 counting from the end).")
    return value


def _year(text: str, where: str) -> int:
    if not (text.isdigit() and 1 <= int(text) <= 9999):
        raise _bad(where, f"{text!r} is not a year.")
    return int(text)


@dataclass(frozen=True)
class Interval:
    times: tuple[tuple[int, int], ...]  # minutes of the day [start, end); start > end runs over midnight
    weekdays: Ranges | None  # 0 = Monday
    days_of_month: Ranges | None
    months: Ranges | None
    years: Ranges | None
    zone: ZoneInfo

    def _day_holds(self, day: date) -> bool:
        if self.weekdays is not None and not _within(day.weekday(), self.weekdays):
            return False
        if self.months is not None and not _within(day.month, self.months):
            return False
        if self.years is not None and not _within(day.year, self.years):
            return False
        if self.days_of_month is not None:
            size = calendar.monthrange(day.year, day.month)[1]
            spans = [(_day(a, size), _day(b, size)) for a, b in self.days_of_month]
            if not _within(day.day, tuple(spans)):
                return False
        return True

    def contains(self, instant: datetime) -> bool:
        local = instant.astimezone(self.zone)
        today = local.date()
        if not self.times:
            return self._day_holds(today)
        minute = local.hour * 60 + local.minute
        for start, end in self.times:
            if start < end:
                if start <= minute < end and self._day_holds(today):
                    return True
            elif minute >= start and self._day_holds(today):
                return True
            elif minute < end and self._day_holds(today - timedelta(days=1)):
                return True
        return False


def _day(value: int, size: int) -> int:
    return value if value > 0 else size + 1 + value


def _within(value: int, ranges: Ranges) -> bool:
    return any(a <= value <= b for a, b in ranges)


def compile_interval(raw: d.Interval, param: str) -> Interval:
    times = []
    for i, t in enumerate(raw.times or []):
        start = _minutes(t.start_time, f"{param}.times[{i}].start_time", end=False)
        end = _minutes(t.end_time, f"{param}.times[{i}].end_time", end=True)
        if start == end:
            raise _bad(f"{param}.times[{i}]", "A time range's start and end must differ.")
        times.append((start, end))
    location = raw.location or "UTC"
    try:
        zone = ZoneInfo(location)
    except (ZoneInfoNotFoundError, ValueError):
        raise _bad(f"{param}.location", f"{location!r} is not an IANA time zone (e.g. Europe/Berlin).") from None
    return Interval(
        times=tuple(times),
        weekdays=_ranges(raw.weekdays, f"{param}.weekdays", _named(WEEKDAYS, "weekday", 0))
        if raw.weekdays is not None
        else None,
        days_of_month=_ranges(raw.days_of_month, f"{param}.days_of_month", _day_of_month)
        if raw.days_of_month is not None
        else None,
        months=_ranges(raw.months, f"{param}.months", _named(MONTHS, "month", 1)) if raw.months is not None else None,
        years=_ranges(raw.years, f"{param}.years", _year) if raw.years is not None else None,
        zone=zone,
    )


@dataclass(frozen=True)
class TimeInterval:
    name: str
    intervals: tuple[Interval, ...]

    def contains(self, instant: datetime) -> bool:
        return any(i.contains(instant) for i in self.intervals)


def compile_time_interval(raw: d.TimeInterval, param: str) -> TimeInterval:
    return TimeInterval(
        raw.name, tuple(compile_interval(x, f"{param}.intervals[{i}]") for i, x in enumerate(raw.intervals))
    )

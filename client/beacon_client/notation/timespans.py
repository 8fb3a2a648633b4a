"""The query language's timespan units (`5m`, `1h`, `100ms`), and times relative to now in them (`now`, `now-1h`,
`now + 30m`): the query API's `start_time` / `end_time` (app/query/timerange.py), the query language's lexer and
the CLI's time options (beacon_client/cli/times.py) read the same notation. Standard library only, so that the
client's commands can use it without loading the server side."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

TIMESPAN_UNITS: dict[str, timedelta] = {
    "d": timedelta(days=1),
    "day": timedelta(days=1),
    "days": timedelta(days=1),
    "h": timedelta(hours=1),
    "hr": timedelta(hours=1),
    "hrs": timedelta(hours=1),
    "hour": timedelta(hours=1),
    "hours": timedelta(hours=1),
    "m": timedelta(minutes=1),
    "min": timedelta(minutes=1),
    "minute": timedelta(minutes=1),
    "minutes": timedelta(minutes=1),
    "s": timedelta(seconds=1),
    "sec": timedelta(seconds=1),
    "second": timedelta(seconds=1),
    "seconds": timedelta(seconds=1),
    "ms": timedelta(milliseconds=1),
    "milli": timedelta(milliseconds=1),
    "millisecond": timedelta(milliseconds=1),
    "milliseconds": timedelta(milliseconds=1),
    "us": timedelta(microseconds=1),
    "microsecond": timedelta(microseconds=1),
    "microseconds": timedelta(microseconds=1),
}

# ASCII only: `\d` would also take other scripts' digits.
RELATIVE_TIME = re.compile(r"now(?:\s*([+-])\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+))?", re.ASCII)


class UnknownUnit(ValueError):
    def __init__(self, unit: str) -> None:
        super().__init__(f"unknown unit {unit!r}")
        self.unit = unit


def relative(text: str, now: datetime) -> datetime | None:
    """The time `text` names relative to `now`, or None when it is not such a time. Raises UnknownUnit, and
    OverflowError for a span (or the time it leads to) beyond what datetime holds."""
    match = RELATIVE_TIME.fullmatch(text.strip())
    if match is None:
        return None
    sign, amount, name = match.groups()
    if sign is None:
        return now
    unit = TIMESPAN_UNITS.get(name)
    if unit is None:
        raise UnknownUnit(name)
    span = unit * float(amount)
    return now - span if sign == "-" else now + span

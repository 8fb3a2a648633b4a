"""`--time now-5m` for the commands whose API takes only absolute times (annotations): relative times are
resolved here, against this machine's clock, in the same notation queries accept."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import click

_RELATIVE = re.compile(r"now(?:\s*([+-])\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+))?", re.ASCII)
_UNITS = {
    **dict.fromkeys(("d", "day", "days"), timedelta(days=1)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), timedelta(hours=1)),
    **dict.fromkeys(("m", "min", "minute", "minutes"), timedelta(minutes=1)),
    **dict.fromkeys(("s", "sec", "second", "seconds"), timedelta(seconds=1)),
    **dict.fromkeys(("ms", "millisecond", "milliseconds"), timedelta(milliseconds=1)),
}


def absolute(value: str | None, option: str, now: datetime | None = None) -> str | None:
    """`now`, `now-5m`, `now+1h` as RFC 3339 (UTC, milliseconds); anything else is passed on as it is (the
    service checks it)."""
    if value is None:
        return None
    match = _RELATIVE.fullmatch(value.strip())
    if match is None:
        return value
    moment = now or datetime.now(UTC)
    if match.group(1) is not None:
        unit = _UNITS.get(match.group(3))
        if unit is None:
            raise click.BadParameter(
                f"unknown unit {match.group(3)!r} (use d, h, m, s or ms, as in now-5m)", param_hint=option
            )
        try:
            span = unit * float(match.group(2))
            moment = moment - span if match.group(1) == "-" else moment + span
        except OverflowError:
            raise click.BadParameter("the time is out of range", param_hint=option) from None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

"""The time range of a chart and its bucket size: the last so long (`?range=24h`, any duration from a minute to 90
days: `90m`, `3d`, `1h30m`) or explicit start and end.

Ranges are widened to whole buckets, aligned as the query language's `bin()` aligns them (on multiples of the
step since the Unix epoch), so every bar covers a full bucket and the first one is not cut short.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.errors import BeaconError
from app.timeparams import parse_time_param
from beacon_client.notation.durations import parse_duration

# The ranges the pages offer in their menus; `?range=` takes any duration within the bounds below.
PRESETS: dict[str, timedelta] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
DEFAULT_PRESET = "24h"
MIN_RANGE = timedelta(minutes=1)
MAX_RANGE = timedelta(days=90)
MAX_BUCKETS = 300
# Bucket sizes a chart may use, as the query language writes them.
STEPS: tuple[tuple[str, timedelta], ...] = tuple(
    (text, timedelta(seconds=seconds))
    for text, seconds in (
        ("1s", 1),
        ("5s", 5),
        ("10s", 10),
        ("15s", 15),
        ("30s", 30),
        ("1m", 60),
        ("2m", 120),
        ("5m", 300),
        ("10m", 600),
        ("15m", 900),
        ("30m", 1800),
        ("1h", 3600),
        ("2h", 7200),
        ("3h", 10800),
        ("6h", 21600),
        ("12h", 43200),
        ("1d", 86400),
        ("7d", 604800),
    )
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class TimeRange:
    start: datetime
    end: datetime
    step: timedelta
    step_text: str  # the step as the query language writes it: `5m`
    preset: str | None  # the `range` shown ("24h", "90m"), or None for an explicit start and end

    @property
    def buckets(self) -> int:
        return round((self.end - self.start) / self.step)

    @property
    def start_text(self) -> str:
        return short_iso(self.start)

    @property
    def end_text(self) -> str:
        return short_iso(self.end)


def short_iso(t: datetime) -> str:
    """RFC 3339 in UTC, without sub-second digits when there are none: `2026-11-21T10:00:00Z`."""
    t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond // 1000:03d}Z" if t.microsecond else "Z")


def choose_step(span: timedelta) -> tuple[str, timedelta]:
    """The smallest step that keeps the chart at or under MAX_BUCKETS buckets (the largest step past that)."""
    for text, step in STEPS:
        if span / step <= MAX_BUCKETS:
            return text, step
    return STEPS[-1]


def floor_to(t: datetime, step: timedelta) -> datetime:
    return _EPOCH + (t - _EPOCH) // step * step


def ceil_to(t: datetime, step: timedelta) -> datetime:
    floored = floor_to(t, step)
    return floored if floored == t else floored + step


def range_length(text: str) -> timedelta:
    """A `range` parameter: a duration from MIN_RANGE to MAX_RANGE (`15m`, `90m`, `36h`, `3d`, `2w`)."""
    problem = f"`range` must be a duration from 1m to 90d, such as 90m, 6h or 3d; got {text!r}."
    try:
        length = PRESETS.get(text) or parse_duration(text, examples="90m, 6h or 3d")
    except ValueError:
        raise BeaconError("invalid_parameter", problem, param="range") from None
    if not MIN_RANGE <= length <= MAX_RANGE:
        raise BeaconError("invalid_parameter", problem, param="range")
    return length


# What a monitor's page shows by default: the shortest of these that holds WINDOWS_SHOWN of its windows, so a
# 10-second monitor is not a sliver of a day and a daily one is not a single point of it.
MONITOR_RANGES = ("15m", "30m", "1h", "3h", "6h", "12h", "24h", "3d", "7d", "30d", "90d")
WINDOWS_SHOWN = 90


def range_for_window(window: timedelta) -> str:
    """The default `range` of a chart whose points are `window` apart (a monitor's window or interval)."""
    for text in MONITOR_RANGES:
        if range_length(text) >= window * WINDOWS_SHOWN:
            return text
    return MONITOR_RANGES[-1]


def resolve_range(
    preset: str | None, start: str | None, end: str | None, now: datetime, *, default: str = DEFAULT_PRESET
) -> TimeRange:
    """The range a page shows: explicit `start` (and `end`, default now) win over `range` (`default` without)."""
    if start:
        lower = parse_time_param(start, "start", now)
        upper = parse_time_param(end, "end", now) if end else now
        assert lower is not None and upper is not None
        if lower >= upper:
            raise BeaconError("invalid_parameter", "`start` must be before `end`.", param="start")
        chosen: str | None = None
    else:
        chosen = (preset or default).strip().lower()
        length = range_length(chosen)
        upper = now
        lower = now - length
    text, step = choose_step(upper - lower)
    # A `range` keeps its length: the range ends at the end of the current bucket and starts on a bucket's edge.
    aligned_end = ceil_to(upper, step)
    aligned_start = floor_to(aligned_end - (upper - lower), step) if chosen else floor_to(lower, step)
    return TimeRange(aligned_start.astimezone(UTC), aligned_end.astimezone(UTC), step, text, chosen)

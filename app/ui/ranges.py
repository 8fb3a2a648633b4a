"""The time range of a chart and its bucket size: a preset (last 24 hours) or explicit start and end.

Ranges are widened to whole buckets, aligned as the query language's `bin()` aligns them (on multiples of the
step since the Unix epoch), so every bar covers a full bucket and the first one is not cut short.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.errors import BeaconError, check_choice
from app.timeparams import parse_time_param

PRESETS: dict[str, timedelta] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
DEFAULT_PRESET = "24h"
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
    preset: str | None  # "24h", or None for an explicit range

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


def resolve_range(preset: str | None, start: str | None, end: str | None, now: datetime) -> TimeRange:
    """The range a page shows: explicit `start` (and `end`, default now) win over a preset."""
    if start:
        lower = parse_time_param(start, "start")
        upper = parse_time_param(end, "end") if end else now
        assert lower is not None and upper is not None
        if lower >= upper:
            raise BeaconError("invalid_parameter", "`start` must be before `end`.", param="start")
        chosen: str | None = None
    else:
        chosen = preset or DEFAULT_PRESET
        check_choice(chosen, PRESETS, "range")
        upper = now
        lower = now - PRESETS[chosen]
    text, step = choose_step(upper - lower)
    # Presets keep their length: the range ends at the end of the current bucket.
    aligned_end = ceil_to(upper, step)
    aligned_start = aligned_end - PRESETS[chosen] if chosen else floor_to(lower, step)
    return TimeRange(aligned_start.astimezone(UTC), aligned_end.astimezone(UTC), step, text, chosen)

"""Geometry of a monitor's state timeline: coloured stretches of `ok` / `alerting` / `no_data` / `error` between
its state changes, and a tick for every history event, over a [start, end) window.

A monitor's history records changes only, so the state at any moment follows from the changes before it; a
monitor starts `ok`. As in app/monitors/state.py, a monitor is `alerting` while any of its series is: a
`notify_by_group` monitor records each group's triggers and resolves (the monitor's own series has the key
""), so the timeline keeps the set of groups alerting. `no_data` and `error` are conditions of the whole
monitor that hold until the next trigger or resolve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.timefmt import iso_ms

STATE_AFTER = {"triggered": "alerting", "resolved": "ok", "no_data": "no_data", "error": "error"}


@dataclass(frozen=True)
class HistoryEvent:
    time: datetime
    kind: str  # triggered, resolved, no_data, error, matched
    state: str
    group: str  # the group of a notify_by_group monitor's change (its key); "" for the whole monitor
    label: str  # shown on hover


@dataclass(frozen=True)
class Stretch:
    x: float
    width: float
    state: str
    label: str


@dataclass(frozen=True)
class Mark:
    x: float
    kind: str
    label: str
    time: str


@dataclass
class Timeline:
    width: int
    height: int
    start: str
    end: str
    stretches: list[Stretch] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)


def state_timeline(
    events: Sequence[HistoryEvent],
    *,
    created_at: datetime,
    start: datetime,
    end: datetime,
    width: int = 960,
    height: int = 22,
) -> Timeline:
    """`events` in any order; those before `start` only set the state the window opens with."""
    timeline = Timeline(width, height, iso_ms(start), iso_ms(end))
    span = (end - start).total_seconds() or 1.0

    def x_of(t: datetime) -> float:
        return max(0.0, min(float(width), (t - start).total_seconds() / span * width))

    ordered = sorted(events, key=lambda e: e.time)
    state, since = "ok", max(created_at, start)
    changes: list[tuple[datetime, str]] = []
    alerting: set[str] = set()  # the series alerting: group keys, "" for the monitor's own
    condition: str | None = None  # no_data or error, of the whole monitor
    for e in ordered:
        if e.kind not in STATE_AFTER:
            continue
        if e.kind in ("no_data", "error"):
            condition = e.kind
        else:
            condition = None
            if e.kind == "triggered":
                alerting.add(e.group)
            else:
                alerting.discard(e.group)
                if not e.group and e.state == "ok":
                    alerting.clear()  # the whole monitor is ok again: no group is left alerting
        now_state = condition or ("alerting" if alerting else "ok")
        if e.time < start:
            state = now_state
        elif e.time < end and now_state != (changes[-1][1] if changes else state):
            changes.append((e.time, now_state))
    for t, new_state in [*changes, (end, "")]:
        if t > since and since < end:
            timeline.stretches.append(
                Stretch(x_of(since), x_of(t) - x_of(since), state, f"{state} from {iso_ms(since)} to {iso_ms(t)}")
            )
        state, since = new_state, max(t, since)
    for e in ordered:
        if start <= e.time < end:
            timeline.marks.append(Mark(x_of(e.time), e.kind, e.label, iso_ms(e.time)))
    return timeline

"""The monitor state machine: pure functions from (state before, what one evaluation observed) to (state after,
the changes to record and notify). No I/O: app/monitors/runner.py feeds it and writes what it returns.

States: `ok`, `alerting`, `no_data`, `error`.
- A threshold monitor keeps one *series* per group (`notify_by_group`), or one series (key "") for the whole
  monitor. A series is `ok` or `alerting`; it remembers its last N results (breached or not) and alerts while
  at least M of them breached (`trigger_after` M of N). The monitor is `alerting` while any series is.
- `error` (the query failed) and `no_data` (nothing to compare, with `alert_on_no_data`) are conditions of the
  whole monitor: the run does not count towards any series' M of N, and the series keep their state, so a
  failing query neither resolves nor re-triggers an alert. Without `alert_on_no_data`, no data counts as "not
  breached".
- A change notifies once: entering `alerting` (`triggered`), `no_data` or `error`; leaving them for `ok`
  (`resolved`, sent only when the monitor is `resolvable`; otherwise recorded without a notification).
  Staying in a state notifies nothing.
- A match_event monitor is `ok` (or `error`); every run that finds new events records one `matched` change.
- With `repeat_seconds` (the monitor's `repeat_interval_seconds`), a series still alerting records a `repeat`
  change once that long has passed since its trigger or its last repeat (`notified_at`): the message is sent
  again, so one that was lost or ignored is corrected. Without it, a trigger is sent once.
"""

from __future__ import annotations

import operator as op
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

ChangeKind = Literal["triggered", "resolved", "no_data", "error", "matched", "repeat"]
MAX_N = 100  # the longest M-of-N window

COMPARE: dict[str, Callable[[float, float], bool]] = {
    "above": op.gt,
    "above_or_equal": op.ge,
    "below": op.lt,
    "below_or_equal": op.le,
}


class Series(msgspec.Struct, kw_only=True):
    """One group's state, stored in `monitors.series` under its key."""

    group: dict[str, Any] = msgspec.field(default_factory=dict)
    state: Literal["ok", "alerting"] = "ok"
    recent: list[bool] = msgspec.field(default_factory=list)  # the last N results, oldest first
    value: float | None = None
    notified_at: float | None = None  # when its trigger (or last repeat) was made, in Unix seconds


@dataclass(frozen=True)
class Rules:
    operator: str
    threshold: float
    m: int = 1
    n: int = 1
    resolvable: bool = True
    alert_on_no_data: bool = False
    grouped: bool = False
    repeat_seconds: int | None = None

    def breached(self, value: float) -> bool:
        return COMPARE[self.operator](value, self.threshold)

    def worst(self, values: list[float]) -> float:
        """The value that is most in breach: the largest for above, the smallest for below."""
        return max(values) if self.operator.startswith("above") else min(values)


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    state: str  # the state of the monitor (or of the group) after the change
    group: dict[str, Any] = field(default_factory=dict)
    value: float | None = None
    notify: bool = True


@dataclass(frozen=True)
class Values:
    """A successful threshold evaluation: series key -> (group values, value). Empty: no data."""

    by_key: Mapping[str, tuple[dict[str, Any], float]]


@dataclass(frozen=True)
class Failed:
    error: str


@dataclass(frozen=True)
class Step:
    state: str
    series: dict[str, Series]
    changes: list[Change]
    value: float | None  # the monitor's value this run (the worst over its groups)


def _condition(kind: Literal["no_data", "error"], before: str, series: dict[str, Series]) -> Step:
    changes = [] if before == kind else [Change(kind, kind)]
    return Step(kind, series, changes, None)


def step_threshold(
    before: str, series: Mapping[str, Series], observed: Values | Failed, rules: Rules, *, now: float | None = None
) -> Step:
    """One run. `now` (Unix seconds) stamps triggers for `repeat_seconds`; without it nothing is stamped."""
    current = {k: msgspec.structs.replace(s, recent=list(s.recent)) for k, s in series.items()}
    if isinstance(observed, Failed):
        return _condition("error", before, current)
    if not observed.by_key and rules.alert_on_no_data:
        return _condition("no_data", before, current)
    changes: list[Change] = []
    after: dict[str, Series] = {}
    for key in [*current, *(k for k in observed.by_key if k not in current)]:
        s = current.get(key) or Series(group=observed.by_key[key][0])
        seen = observed.by_key.get(key)
        value = seen[1] if seen is not None else None
        s.value = value
        s.recent = [*s.recent, value is not None and rules.breached(value)][-rules.n :]
        alerting = sum(s.recent) >= rules.m
        if alerting and s.state == "ok":
            s.state = "alerting"
            s.notified_at = now
            changes.append(Change("triggered", "alerting", s.group, value))
        elif not alerting and s.state == "alerting":
            s.state = "ok"
            changes.append(Change("resolved", "ok", s.group, value, notify=rules.resolvable))
        if s.state == "ok" and seen is None and not any(s.recent):
            continue  # a group that went away and has nothing left to remember
        after[key] = s
    state = "alerting" if any(s.state == "alerting" for s in after.values()) else "ok"
    values = [v for _, v in observed.by_key.values()]
    value = rules.worst(values) if values else None
    if before in ("no_data", "error"):
        changes = _recovered(changes, after, state, value, rules, now)
    if rules.repeat_seconds and now is not None:
        changes += _repeats(after, rules.repeat_seconds, now)
    return Step(state, after, changes, value)


def _repeats(after: dict[str, Series], every: int, now: float) -> list[Change]:
    """A `repeat` for each series alerting since at least `every` seconds before `now` without a message (one
    triggered in this run has `notified_at` now: none)."""
    out = []
    for s in after.values():
        if s.state != "alerting":
            continue
        if s.notified_at is None:  # alerting from before repeats were asked for: the clock starts now
            s.notified_at = now
        elif now - s.notified_at >= every:
            s.notified_at = now
            out.append(Change("repeat", "alerting", s.group, s.value))
    return out


def _recovered(
    changes: list[Change], after: dict[str, Series], state: str, value: float | None, rules: Rules, now: float | None
) -> list[Change]:
    """Leaving no_data or error: the last message about the whole monitor (group {}) said so; follow it with
    where the monitor stands now, unless this run's own changes already said it for group {}."""
    if any(not c.group for c in changes):
        return changes
    whole = after.get("")
    if not rules.grouped and whole is not None and whole.state == "alerting":
        whole.notified_at = now
        return [Change("triggered", "alerting", {}, value), *changes]
    return [Change("resolved", state, {}, value, notify=rules.resolvable), *changes]


def step_match(before: str, observed: int | Failed, resolvable: bool = True) -> Step:
    """A match_event run: `observed` is the number of new matching events (or the failure)."""
    if isinstance(observed, Failed):
        return _condition("error", before, {})
    changes: list[Change] = []
    if before == "error":
        changes.append(Change("resolved", "ok", notify=resolvable))
    if observed:
        changes.append(Change("matched", "ok", value=float(observed)))
    return Step("ok", {}, changes, float(observed))


def resize(series: Mapping[str, Series], n: int) -> dict[str, Series]:
    """Keep the last `n` results of every series (after `trigger_after` changed)."""
    return {k: msgspec.structs.replace(s, recent=s.recent[-n:]) for k, s in series.items()}

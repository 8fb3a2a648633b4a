"""The message of a notification: `event_for` is the one place an `Event` is built for it.

A tree group's message lists the group's alerts, firing first (`alert_group`). A monitor's own route keeps the
monitor's one-alert messages (`monitor.triggered` / `resolved` / `matched`, with value, threshold, matches…),
rendered from the monitor event its alert last changed with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import msgspec

from adapters.contract import AlertGroup, Event, GroupAlert
from app.annotations.changes import NONE, Changes, Concerned
from app.timefmt import iso_ms, iso_ms_or_none


def _common(maps: Sequence[Mapping[str, str]]) -> dict[str, str]:
    if not maps:
        return {}
    first, rest = maps[0], maps[1:]
    return {k: v for k, v in sorted(first.items()) if all(m.get(k) == v for m in rest)}


def group_name(group_labels: Mapping[str, str], common_labels: Mapping[str, str]) -> str:
    """`HighLatency (team=payments)`: the alert name the group shares, then its other group labels."""
    alertname = common_labels.get("alertname") or group_labels.get("alertname")
    others = ", ".join(f"{k}={v}" for k, v in sorted(group_labels.items()) if k != "alertname")
    if alertname:
        return f"{alertname} ({others})" if others else alertname
    return others or "Alerts"


@dataclass(slots=True)
class Member:
    """An alert of a group, as a flush reads it."""

    fingerprint: str
    labels: dict[str, str]
    annotations: dict[str, str]
    starts_at: datetime
    ends_at: datetime | None
    generator_url: str | None
    monitor_id: str | None = None
    monitor_event_id: str | None = None
    event_kind: str | None = None  # the kind of that monitor event (a match is an event, not a state)

    def firing_at(self, now: datetime) -> bool:
        return self.ends_at is None or self.ends_at > now


@dataclass(frozen=True, slots=True)
class MonitorInfo:
    """The monitor's fields a message shows (read with the flush's own statement)."""

    name: str
    description: str | None
    threshold: float | None
    operator: str | None
    apl: str


@dataclass(frozen=True, slots=True)
class EventInfo:
    """The monitor event a message reports (`monitor_events`)."""

    id: str
    kind: str
    state: str
    time: datetime
    value: float | None
    start_time: datetime | None
    end_time: datetime | None
    group_values: dict[str, Any]
    matches: list[dict[str, Any]]
    match_count: int | None
    error: str | None


@dataclass(frozen=True)
class MonitorFacts:
    """What a monitor's one-alert message says besides its alert: the monitor and the event it changed with."""

    monitor: MonitorInfo | None  # None once the monitor is deleted
    event: EventInfo | None


def event_for(
    *,
    key: str,
    reason: Literal["first", "new_alerts", "resolved", "repeat"],
    group_labels: Mapping[str, str],
    firing: Sequence[Member],
    resolved: Sequence[Member],
    now: datetime,
    link: str | None,
    monitor: MonitorFacts | None,
    changes: Changes = NONE,
) -> Event:
    """The Event of one notification: a monitor's own message (`monitor` given), else the group's; `changes`:
    what changed before it (app/annotations/changes.py, looked up for a whole flush at once)."""
    if monitor is not None:  # a monitor's own group: one alert
        event = monitor_message(monitor, [*firing, *resolved][0], firing=bool(firing), link=link, now=now)
        return msgspec.structs.replace(event, changes=changes.listed, more_changes=changes.more)
    return group_event(
        key=key,
        reason=reason,
        group_labels=group_labels,
        alerts=[*(alert_item(a, firing=True) for a in firing), *(alert_item(a, firing=False) for a in resolved)],
        now=now,
        link=link,
        changes=changes,
    )


def monitor_message(facts: MonitorFacts, alert: Member, *, firing: bool, link: str | None, now: datetime) -> Event:
    """A monitor's message as its own notifiers always had it. A repeat is the trigger sent again; a resolve
    without a resolved event (the monitor was deleted) is said from its alert."""
    m, e = facts.monitor, facts.event
    kind = e.kind if e is not None else "triggered"
    if not firing:
        kind = "resolved"
    elif kind in ("repeat", "resolved"):
        kind = "triggered"
    monitor_link = f"{link.rsplit('/ui/', 1)[0]}/ui/monitors/{alert.monitor_id}" if link else None
    fields: dict[str, Any] = {
        "kind": kind,
        "monitor_id": alert.monitor_id,
        "monitor_name": m.name if m is not None else alert.labels.get("alertname", alert.fingerprint),
        "link": alert.annotations.get("link") or monitor_link,
        "time": iso_ms(e.time if e is not None and (e.kind == "resolved" or firing) else now),
        "state": "ok" if not firing else (e.state if e is not None and e.kind != "resolved" else "alerting"),
    }
    if m is not None:
        fields.update(description=m.description, threshold=m.threshold, operator=m.operator, query=m.apl)
    if e is not None:
        fields.update(
            monitor_event_id=e.id,
            value=e.value,
            start_time=iso_ms_or_none(e.start_time),
            end_time=iso_ms_or_none(e.end_time),
            group=e.group_values or {},
            matches=e.matches or [],
            match_count=e.match_count,
            error=e.error,
        )
    return Event(**fields)


def alert_item(row: Member, firing: bool) -> GroupAlert:
    return GroupAlert(
        fingerprint=row.fingerprint,
        status="firing" if firing else "resolved",
        labels=dict(sorted(row.labels.items())),
        annotations=dict(sorted(row.annotations.items())),
        starts_at=iso_ms(row.starts_at),
        ends_at=iso_ms_or_none(row.ends_at) if not firing else None,
        generator_url=row.generator_url,
    )


def concerned(firing: Sequence[Member], resolved: Sequence[Member]) -> list[Concerned]:
    """The alerts a message lists (those that fire, and the resolved ones it tells of), as the change lookup
    takes them."""
    return [
        *(Concerned(a.labels, a.starts_at, True) for a in firing),
        *(Concerned(a.labels, a.starts_at, False) for a in resolved),
    ]


def group_event(
    *,
    key: str,
    reason: Literal["first", "new_alerts", "resolved", "repeat"],
    group_labels: Mapping[str, str],
    alerts: Sequence[GroupAlert],
    now: datetime,
    link: str | None,
    changes: Changes = NONE,
) -> Event:
    def order(a: GroupAlert) -> tuple[str, list[tuple[str, str]]]:
        return a.starts_at, sorted(a.labels.items())

    firing = sorted((a for a in alerts if a.status == "firing"), key=order)
    resolved = sorted((a for a in alerts if a.status == "resolved"), key=order)
    ordered = firing + resolved
    common_labels = _common([a.labels for a in ordered])
    name = group_name(group_labels, common_labels)
    counts = f"{len(firing)} firing" + (f", {len(resolved)} resolved" if resolved else "")
    return Event(
        kind="triggered" if firing else "resolved",
        state="alerting" if firing else "ok",
        monitor_name=name,
        description=counts if firing else f"All {len(resolved)} alert{'s' if len(resolved) != 1 else ''} resolved.",
        link=link,
        time=iso_ms(now),
        alert_group=AlertGroup(
            key=key,
            reason=reason,
            status="firing" if firing else "resolved",
            labels=dict(sorted(group_labels.items())),
            common_labels=common_labels,
            common_annotations=_common([a.annotations for a in ordered]),
            alerts=ordered,
        ),
        changes=changes.listed,
        more_changes=changes.more,
    )

"""The message of one group notification: an `Event` whose `alert_group` lists the group's alerts, firing first."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from adapters.base import AlertGroup, Event, GroupAlert
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


def concerned(rows: Sequence[Member], firing: Collection[str], told: Collection[str]) -> list[Concerned]:
    """The alerts a message lists (those that fire, and the resolved ones it tells of), as the change lookup
    takes them."""
    return [
        Concerned(r.labels, r.starts_at, r.fingerprint in firing)
        for r in rows
        if r.fingerprint in firing or r.fingerprint in told
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

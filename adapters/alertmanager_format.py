"""Alertmanager's webhook body (version "4"), so receivers written for Alertmanager work unchanged.

A routed group maps one to one (its key, labels and alerts). A monitor's own message (a monitor that names its
notifiers, or a test) becomes a group of one alert labelled like the monitor's routed alerts (`alertname`,
`monitor_id`, and the group's field values), so one receiver handles both.
"""

from __future__ import annotations

from typing import Any

import msgspec

from adapters.contract import Event, GroupAlert
from app.routing.labels import fingerprint
from app.timefmt import GO_ZERO_TIME
from beacon_client.notation.labels import describe


def alertmanager_body(event: Event, *, receiver: str, external_url: str, max_alerts: int = 0) -> dict[str, Any]:
    """The payload; `max_alerts` > 0 keeps the first that many alerts (firing first) and counts the rest in
    `truncatedAlerts`, as Alertmanager's `max_alerts` does."""
    group = event.alert_group
    if group is not None:
        alerts, key, status = group.alerts, group.key, group.status
        group_labels, common_labels, common_annotations = group.labels, group.common_labels, group.common_annotations
    else:
        alert = _monitor_alert(event)
        alerts, status = [alert], alert.status
        key = "{}:" + describe(alert.labels)  # written as a routed group's key is
        group_labels = {"alertname": alert.labels["alertname"]}
        common_labels, common_annotations = alert.labels, alert.annotations
    kept = alerts[:max_alerts] if max_alerts > 0 else alerts
    return {
        "version": "4",
        "groupKey": key,
        "truncatedAlerts": len(alerts) - len(kept),
        "status": status,
        "receiver": receiver,
        "groupLabels": group_labels,
        "commonLabels": common_labels,
        "commonAnnotations": common_annotations,
        "externalURL": external_url,
        "alerts": [_alert(a) for a in kept],
    }


def _alert(alert: GroupAlert) -> dict[str, Any]:
    return {
        "status": alert.status,
        "labels": alert.labels,
        "annotations": alert.annotations,
        "startsAt": alert.starts_at,
        "endsAt": alert.ends_at or GO_ZERO_TIME,
        "generatorURL": alert.generator_url or "",
        "fingerprint": alert.fingerprint,
    }


def _monitor_alert(event: Event) -> GroupAlert:
    labels = {"alertname": event.monitor_name}
    if event.monitor_id:
        labels["monitor_id"] = event.monitor_id
    for name, value in event.group.items():
        labels.setdefault(str(name), value if isinstance(value, str) else _json_text(value))
    annotations = {"summary": event.monitor_name}
    if event.description:
        annotations["description"] = event.description
    if event.value is not None:
        annotations["value"] = _json_text(event.value)
    if event.error:
        annotations["error"] = event.error
    resolved = event.kind == "resolved"
    return GroupAlert(
        fingerprint=fingerprint(labels),
        status="resolved" if resolved else "firing",
        labels=labels,
        annotations=annotations,
        starts_at=event.start_time or event.time,
        ends_at=event.time if resolved else None,
        generator_url=event.link,
    )


def _json_text(value: Any) -> str:
    return msgspec.json.encode(value).decode()

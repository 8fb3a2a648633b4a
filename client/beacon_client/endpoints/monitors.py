from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UnsetType

from beacon_client.call import Call, TimeArg, decode, json_call, no_content, query_string, segment
from beacon_client.models import Monitor, MonitorEvent, MonitorSaved, Page, TriggerAfter

Unset = UnsetType


def create_monitor(
    name: str,
    type: str,
    apl: str,
    *,
    notifier_ids: Sequence[str] = (),
    operator: str | Unset = msgspec.UNSET,
    threshold: float | Unset = msgspec.UNSET,
    description: str | Unset = msgspec.UNSET,
    interval_seconds: int | Unset = msgspec.UNSET,
    range_seconds: int | Unset = msgspec.UNSET,
    delay_seconds: int | Unset = msgspec.UNSET,
    alert_on_no_data: bool | Unset = msgspec.UNSET,
    notify_by_group: bool | Unset = msgspec.UNSET,
    resolvable: bool | Unset = msgspec.UNSET,
    trigger_after: TriggerAfter | Unset = msgspec.UNSET,
    repeat_interval_seconds: int | Unset = msgspec.UNSET,
    disabled_until: TimeArg | Unset = msgspec.UNSET,
    labels: Mapping[str, str] | Unset = msgspec.UNSET,
) -> Call[MonitorSaved]:
    """A `threshold` monitor (with `operator` and `threshold`) or a `match_event` one; unset fields take
    the service's defaults."""
    return json_call(
        "POST",
        "/v1/monitors",
        decode(MonitorSaved),
        name=name,
        type=type,
        apl=apl,
        notifier_ids=list(notifier_ids),
        operator=operator,
        threshold=threshold,
        description=description,
        interval_seconds=interval_seconds,
        range_seconds=range_seconds,
        delay_seconds=delay_seconds,
        alert_on_no_data=alert_on_no_data,
        notify_by_group=notify_by_group,
        resolvable=resolvable,
        trigger_after=trigger_after,
        repeat_interval_seconds=repeat_interval_seconds,
        disabled_until=disabled_until,
        labels=dict(labels) if not isinstance(labels, Unset) else labels,
    )


def list_monitors(
    *, state: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Call[Page[Monitor]]:
    """Newest first; `state` (ok, alerting, no_data, error) keeps the monitors in that state."""
    params = query_string(state=state, limit=limit, cursor=cursor)
    return Call("GET", "/v1/monitors", decode(Page[Monitor]), params=params)


def get_monitor(monitor_id: str) -> Call[Monitor]:
    return Call("GET", f"/v1/monitors/{segment(monitor_id)}", decode(Monitor))


def update_monitor(
    monitor_id: str,
    *,
    name: str | Unset = msgspec.UNSET,
    description: str | Unset | None = msgspec.UNSET,
    apl: str | Unset = msgspec.UNSET,
    operator: str | Unset = msgspec.UNSET,
    threshold: float | Unset = msgspec.UNSET,
    interval_seconds: int | Unset = msgspec.UNSET,
    range_seconds: int | Unset = msgspec.UNSET,
    delay_seconds: int | Unset = msgspec.UNSET,
    notifier_ids: Sequence[str] | Unset = msgspec.UNSET,
    alert_on_no_data: bool | Unset = msgspec.UNSET,
    notify_by_group: bool | Unset = msgspec.UNSET,
    resolvable: bool | Unset = msgspec.UNSET,
    trigger_after: TriggerAfter | Unset = msgspec.UNSET,
    repeat_interval_seconds: int | Unset | None = msgspec.UNSET,
    disabled_until: TimeArg | Unset | None = msgspec.UNSET,
    labels: Mapping[str, str] | Unset = msgspec.UNSET,
) -> Call[MonitorSaved]:
    """Change only the fields given (None clears an optional one)."""
    return json_call(
        "PATCH",
        f"/v1/monitors/{segment(monitor_id)}",
        decode(MonitorSaved),
        name=name,
        description=description,
        apl=apl,
        operator=operator,
        threshold=threshold,
        interval_seconds=interval_seconds,
        range_seconds=range_seconds,
        delay_seconds=delay_seconds,
        notifier_ids=list(notifier_ids) if not isinstance(notifier_ids, Unset) else notifier_ids,
        alert_on_no_data=alert_on_no_data,
        notify_by_group=notify_by_group,
        resolvable=resolvable,
        trigger_after=trigger_after,
        repeat_interval_seconds=repeat_interval_seconds,
        disabled_until=disabled_until,
        labels=dict(labels) if not isinstance(labels, Unset) else labels,
    )


def delete_monitor(monitor_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/monitors/{segment(monitor_id)}", no_content)


def evaluate_monitor(monitor_id: str, *, dry_run: bool = False) -> Call[dict[str, Any]]:
    """Evaluate now; with `dry_run` report the outcome without changing state or notifying."""
    return json_call("POST", f"/v1/monitors/{segment(monitor_id)}/evaluate", decode(dict[str, Any]), dry_run=dry_run)


def monitor_history(
    monitor_id: str, *, limit: int | None = None, cursor: str | None = None
) -> Call[Page[MonitorEvent]]:
    return Call(
        "GET",
        f"/v1/monitors/{segment(monitor_id)}/history",
        decode(Page[MonitorEvent]),
        params=query_string(limit=limit, cursor=cursor),
    )

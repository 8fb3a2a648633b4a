"""A monitor's alerts: what the monitor reports becomes alert updates for app/routing (one alert per monitor, or
per group of a `notify_by_group` monitor), in the evaluation's own transaction.

Labels: the monitor's `labels`, the group's `by` values (names made label-safe: `http.path` -> `http_path`),
then `alertname` (the monitor's name), `monitor_id` and `dataset`, and `beacon_state` for `no_data`/`error`.
Annotations: `summary`, `description`, `value`, `threshold`, `query`, `link`.

Every alert goes through the one notification pipeline (app/routing/pipeline.py): a monitor with notifiers of
its own is routed by its implicit route (`direct`: one alert per group, its one-alert messages, rendered from
the monitor event each alert last changed with), a monitor with none by the tree. Which message goes out, and
whether silences, inhibition or mute timings hold it back, is the pipeline's decision alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.context import OPERATOR_WORDS
from adapters.templating import number
from app.db.monitor import Monitor
from app.errors import BeaconError
from app.monitors.state import Change, Series, Step
from app.routing import store
from app.routing.labels import MAX_VALUE_CHARS, check_labels, fingerprint, sanitize_name

RESERVED = ("alertname", "monitor_id", "dataset", "beacon_state")


def check_monitor_labels(labels: Mapping[str, Any]) -> dict[str, str]:
    checked = check_labels(labels, "labels")
    for name in RESERVED:
        if name in checked:
            raise BeaconError("invalid_field", f"The label `{name}` is set by Beacon.", param=f"labels.{name}")
    return checked


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return number(value)
    return value if isinstance(value, str) else str(value)


def labels_of(monitor: Monitor, group: Mapping[str, Any], state: str | None = None) -> dict[str, str]:
    labels = dict(monitor.labels or {})
    labels.update({sanitize_name(k): _text(v)[:MAX_VALUE_CHARS] for k, v in group.items()})
    labels.update(alertname=monitor.name[:MAX_VALUE_CHARS], monitor_id=monitor.id, dataset=monitor.dataset)
    if state is not None:
        labels["beacon_state"] = state
    return {k: v for k, v in labels.items() if v != ""}  # an empty value is an absent label


def annotations_of(monitor: Monitor, value: float | None, link: str, state: str, error: str | None) -> dict[str, str]:
    if state == "no_data":
        summary = f"{monitor.name} found no data for its query."
    elif state == "error":
        summary = f"{monitor.name} could not be evaluated: {error or 'unknown error'}."
    elif state == "matched":
        summary = f"{monitor.name}: new events matched ({number(value)})."
    elif value is not None and monitor.threshold is not None:
        words = OPERATOR_WORDS.get(monitor.operator or "", monitor.operator or "")
        summary = f"{monitor.name} is alerting: the value {number(value)} is {words} the threshold "
        summary += f"{number(monitor.threshold)}."
    else:
        summary = f"{monitor.name} is alerting."
    found = {"summary": summary, "description": monitor.description or "", "query": monitor.apl, "link": link}
    if value is not None:
        found["value"] = number(value)
    if monitor.threshold is not None:
        found["threshold"] = f"{OPERATOR_WORDS.get(monitor.operator or '', '')} {number(monitor.threshold)}".strip()
    return {k: v for k, v in found.items() if v}


def _input(monitor: Monitor, labels: dict[str, str], annotations: dict[str, str], direct: bool) -> store.AlertInput:
    return store.AlertInput(
        labels, annotations, source="monitor", monitor_id=monitor.id, dataset=monitor.dataset, direct=direct,
        generator_url=annotations.get("link"),
    )  # fmt: skip


def firing_now(
    monitor: Monitor, state: str, series: Mapping[str, Series], link: str, error: str | None, direct: bool
) -> list[store.AlertInput]:
    """The alerts the monitor reports as firing in `state` with these series (one per alerting group)."""
    found = []
    for s in series.values():
        if s.state == "alerting":
            annotations = annotations_of(monitor, s.value, link, "alerting", None)
            found.append(_input(monitor, labels_of(monitor, s.group), annotations, direct))
    if state in ("no_data", "error"):
        annotations = annotations_of(monitor, None, link, state, error)
        found.append(_input(monitor, labels_of(monitor, {}, state), annotations, direct))
    return found


def _change_labels(monitor: Monitor, change: Change, before: str) -> dict[str, str]:
    """The labels of the alert a change concerns (a resolve out of no_data or error: that condition's alert)."""
    if change.kind in ("no_data", "error"):
        return labels_of(monitor, {}, change.kind)
    if change.kind == "resolved" and not change.group and before in ("no_data", "error"):
        return labels_of(monitor, {}, before)
    return labels_of(monitor, change.group)


@dataclass(frozen=True)
class Recording:
    """One monitor's run, for `record_many`: `direct` when the monitor has notifiers of its own; `event_ids`: the
    monitor event of each of `step.changes`."""

    monitor: Monitor
    before: str  # its state before the run
    step: Step
    link: str
    error: str | None
    direct: bool
    event_ids: Sequence[str]


async def record_many(session: AsyncSession, runs: Sequence[Recording], now: datetime) -> None:
    """Bring each run's monitor alerts in line with its `step` (the caller's transaction), in a few statements
    for all of them, each alert noting the monitor event it changed with. The router places them once the
    caller has committed (app/routing/jobs.py)."""
    conn = await store.in_transaction(session)
    alerts: list[store.AlertInput] = []
    keep: list[str] = []
    events: list[tuple[str, str]] = []
    for r in runs:
        firing = firing_now(r.monitor, r.step.state, r.step.series, r.link, r.error, r.direct)
        keep += [a.fingerprint for a in firing]
        alerts += firing
        alerts += _pulses(r.monitor, r.step, r.link, r.direct, now)
        events += [
            (fingerprint(_change_labels(r.monitor, c, r.before)), event_id)
            for c, event_id in zip(r.step.changes, r.event_ids, strict=True)
            if c.notify
        ]
    await store.upsert(conn, alerts, now)
    await store.resolve_others(conn, [r.monitor.id for r in runs], keep, now)
    await store.set_monitor_events(conn, events)


def _pulses(monitor: Monitor, step: Step, link: str, direct: bool, now: datetime) -> list[store.AlertInput]:
    """A match fires for the resolve timeout, as an external alert posted once would."""
    pulses = [
        _input(monitor, labels_of(monitor, {}), annotations_of(monitor, c.value, link, "matched", None), direct)
        for c in step.changes
        if c.kind == "matched"
    ]
    for pulse in pulses:
        pulse.ends_at = now + store.MATCH_PULSE
    return pulses


async def refresh(session: AsyncSession, monitor: Monitor, now: datetime, *, link: str, direct: bool) -> None:
    """After a change of labels, name or notifiers: the alerts the monitor reports now, under their new labels."""
    series = msgspec.convert(monitor.series or {}, dict[str, Series])
    firing = firing_now(monitor, monitor.state, series, link, monitor.last_error, direct)
    conn = await store.in_transaction(session)
    await store.upsert(conn, firing, now)
    await store.resolve_others(conn, [monitor.id], [a.fingerprint for a in firing], now)


async def forget(session: AsyncSession, monitor_id: str, now: datetime) -> None:
    """A deleted monitor's alerts resolve."""
    await store.resolve_others(await store.in_transaction(session), [monitor_id], [], now)

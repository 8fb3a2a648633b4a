"""A monitor's alerts: what the monitor reports becomes alert updates for app/routing (one alert per monitor, or
per group of a `notify_by_group` monitor), in the evaluation's own transaction.

Labels: the monitor's `labels`, the group's `by` values (names made label-safe: `http.path` -> `http_path`),
then `alertname` (the monitor's name), `monitor_id` and `dataset`, and `beacon_state` for `no_data`/`error`.
Annotations: `summary`, `description`, `value`, `threshold`, `query`, `link`.

A monitor with notifiers of its own sends its messages itself, as before; its alerts are recorded (visible in
GET /v1/alerts) but not routed, and silences, inhibition and the mute timings of the routes its labels match
decide whether each message goes out (a resolve goes out when its trigger did). A monitor with no notifiers is
routed by the tree.
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
from app.routing import config, store
from app.routing.labels import MAX_VALUE_CHARS, check_labels, fingerprint, sanitize_name
from app.routing.suppression import Suppressor, load

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


def _change_labels(monitor: Monitor, change: Change) -> dict[str, str]:
    if change.kind in ("no_data", "error"):
        return labels_of(monitor, {}, change.kind)
    return labels_of(monitor, change.group)


def _notified(monitor: Monitor, changes: Sequence[Change], sends: Sequence[bool]) -> list[tuple[str, bool]]:
    """Whether each firing alert's message went out (its resolve follows it). A repeat that was suppressed
    changes nothing: the trigger before it went out."""
    return [
        (fingerprint(_change_labels(monitor, c)), sent)
        for c, sent in zip(changes, sends, strict=True)
        if c.kind != "resolved" and (sent or c.kind != "repeat")
    ]


async def _mark_notified(conn: Any, fired: Sequence[tuple[str, bool]]) -> None:
    if fired:
        await conn.execute(
            "UPDATE alerts a SET notified = i.s FROM unnest($1::text[], $2::boolean[]) AS i(f, s) "
            "WHERE a.fingerprint = i.f",
            [fp for fp, _ in fired],
            [sent for _, sent in fired],
        )


@dataclass(frozen=True)
class Recording:
    """One monitor's run, for `record_many`: `direct` when the monitor has notifiers of its own."""

    monitor: Monitor
    step: Step
    link: str
    error: str | None
    direct: bool


async def record_many(session: AsyncSession, runs: Sequence[Recording], now: datetime) -> list[list[bool]]:
    """Bring each run's monitor alerts in line with its `step` (the caller's transaction), in a few statements
    for all of them; for each run, and each of its `step.changes`, whether the monitor's own notifiers get its
    message (always True when it has none: the tree routes it).

    The same answers as one run after another: a monitor's alerts carry its `monitor_id`, so no run touches
    another's rows, and silences and mute timings depend on the time only. Inhibition depends on the alerts
    firing, which the runs before change: with inhibit rules, the runs go one by one."""
    conn = await store.in_transaction(session)
    if not any(r.direct for r in runs):
        return await _record(conn, runs, None, now)
    tree = (await config.current(conn)).tree
    if tree.inhibit_rules and len(runs) > 1:
        return [(await record_many(session, [r], now))[0] for r in runs]
    return await _record(conn, runs, await load(conn, tree, now), now)


async def _record(
    conn: Any, runs: Sequence[Recording], suppressor: Suppressor | None, now: datetime
) -> list[list[bool]]:
    """`record_many` with the silences, inhibitions and mute timings in force (`suppressor`: None when no run
    is direct)."""
    labels = [[_change_labels(r.monitor, c) for c in r.step.changes] if r.direct else [] for r in runs]
    fps = [[fingerprint(x) for x in xs] for xs in labels]
    notified: dict[str, bool] = {}
    if suppressor is not None:
        rows = await conn.fetch(
            "SELECT fingerprint, notified FROM alerts WHERE fingerprint = ANY($1::text[])", [f for x in fps for f in x]
        )
        notified = {r["fingerprint"]: r["notified"] for r in rows}
    verdicts: list[list[bool]] = []
    alerts: list[store.AlertInput] = []
    keep: list[str] = []
    fired: list[tuple[str, bool]] = []
    for r, xs, fs in zip(runs, labels, fps, strict=True):
        sends = [True] * len(r.step.changes)
        if r.direct:
            assert suppressor is not None
            # A firing change goes out unless silenced, inhibited or muted now; a resolve if its firing did.
            sends = [
                notified.get(fp, True) if c.kind == "resolved" else not suppressor.verdict(fp, x).suppressed
                for c, x, fp in zip(r.step.changes, xs, fs, strict=True)
            ]
            fired += _notified(r.monitor, r.step.changes, sends)
        verdicts.append(sends)
        firing = firing_now(r.monitor, r.step.state, r.step.series, r.link, r.error, r.direct)
        keep += [a.fingerprint for a in firing]
        alerts += firing
        alerts += _pulses(r.monitor, r.step, r.link, r.direct, now)
    await store.upsert(conn, alerts, now)
    await store.resolve_others(conn, [r.monitor.id for r in runs], keep, now)
    await _mark_notified(conn, fired)
    return verdicts


def _pulses(monitor: Monitor, step: Step, link: str, direct: bool, now: datetime) -> list[store.AlertInput]:
    """A match fires for the resolve timeout, as an external alert posted once would."""
    pulses = [
        _input(monitor, labels_of(monitor, {}), annotations_of(monitor, c.value, link, "matched", None), direct)
        for c in step.changes
        if c.kind == "matched"
    ]
    for pulse in pulses:
        pulse.ends_at = now + store.RESOLVE_TIMEOUT
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

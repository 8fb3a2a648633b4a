"""One evaluation of one monitor, written as an outbox.

The caller holds the monitor (an advisory lock on its id, app/db/advisory.py; a try-lock in the loop's claim,
which takes a batch of due monitors per transaction: `evaluate_many`) in the session's transaction and commits
afterwards: the query, the new state, the monitor events, the annotation and the monitor's alerts land in that
one commit, or none of them do. The alerts then go through the one notification pipeline
(app/routing/pipeline.py): the caller wakes the router after its commit, which queues the messages (a monitor's
own notifiers get them at once: its route has no group_wait). So a change is recorded and notified exactly once
however many server processes run the loop, and a process that dies mid-evaluation leaves the monitor due, with
nothing half-written.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, cast

import msgspec
from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.context import OPERATOR_WORDS
from adapters.templating import number
from app.annotations.service import add_annotation
from app.db.engine import driver_connection
from app.db.monitor import Monitor
from app.db.monitor_event import MonitorEvent
from app.db.monitor_notifier import MonitorNotifier
from app.deliveries.sending import DeliveryEnv
from app.monitors import alerting
from app.monitors.evaluation import Observation, Window, observe_many, rules_of, window_for
from app.monitors.state import Change, Series, Step, resize, step_match, step_threshold
from app.request_ids import new_id
from app.timefmt import iso_ms_or_none

# session.info key: the transaction in which an evaluation savepoint is open (see evaluation.observe)
SAVEPOINT_OPEN = "monitor_savepoint_in"
KIND_WORDS = {"triggered": "alerting", "resolved": "resolved", "no_data": "no data", "error": "error"}


log = logging.getLogger("beacon.monitors")


@dataclass
class Report:
    """What one evaluation found and did (for the evaluate endpoint and the scheduler's bookkeeping)."""

    monitor: Monitor
    now: datetime
    window: Window
    before: str
    step: Step
    observation: Observation
    events: list[MonitorEvent] = field(default_factory=list)
    notifier_ids: list[str] = field(default_factory=list)
    row: dict[str, Any] = field(default_factory=dict)  # the monitor row's new values (see `save`)


def note_outcomes(env: DeliveryEnv, reports: Sequence[Report]) -> None:
    """Committed evaluations in the metrics (by the state found), and each change of a monitor's state in the log."""
    for report in reports:
        state = report.step.state
        env.metrics.monitor_evaluations.labels(state).inc()
        if state != report.before:
            monitor = report.monitor
            log.info(
                "monitor %s (%s): %s -> %s",
                monitor.id,
                monitor.name,
                report.before,
                state,
                extra={
                    "monitor_id": monitor.id,
                    "state": state,
                    "previous_state": report.before,
                    "value": report.step.value,
                },
            )


def link(env: DeliveryEnv, monitor_id: str) -> str:
    return link_for(env.settings.base_url, monitor_id)


def link_for(base_url: str, monitor_id: str) -> str:
    """The monitor's console page: a person opens the link in a browser (signing in first if needed), where the
    API's address would answer `missing_token` JSON."""
    return f"{base_url}/ui/monitors/{monitor_id}"


def next_due(due: datetime, now: datetime, interval_seconds: int) -> datetime:
    """The next run on the monitor's own cadence, after `now`: runs missed while nothing ran (downtime, a
    disabled period) are skipped, not replayed; the run that was just made covered the gap."""
    step = timedelta(seconds=interval_seconds)
    if due + step > now:
        return due + step
    return due + step * ((now - due) // step + 1)


async def routes_of(session: AsyncSession, monitor_ids: Sequence[str]) -> dict[str, list[str]]:
    """The notifiers of each monitor, in their order (one query for a batch)."""
    stmt = (
        select(MonitorNotifier.monitor_id, MonitorNotifier.notifier_id)
        .where(MonitorNotifier.monitor_id.in_(list(monitor_ids)))
        .order_by(MonitorNotifier.monitor_id, MonitorNotifier.position)
    )
    found: dict[str, list[str]] = {i: [] for i in monitor_ids}
    for monitor_id, notifier_id in (await session.execute(stmt)).all():
        found[monitor_id].append(notifier_id)
    return found


async def routes(session: AsyncSession, monitor_id: str) -> list[str]:
    return (await routes_of(session, [monitor_id]))[monitor_id]


def series_of(monitor: Monitor) -> dict[str, Series]:
    return resize(msgspec.convert(monitor.series or {}, dict[str, Series]), monitor.trigger_n)


async def evaluate(
    session: AsyncSession,
    env: DeliveryEnv,
    monitor: Monitor,
    dataset_id: int | None,
    *,
    now: datetime,
    scheduled: bool,
    dry_run: bool = False,
) -> Report:
    """`evaluate_many` for one locked monitor (the evaluate endpoint, and a monitor retried alone)."""
    batch = [(monitor, dataset_id)]
    return (await evaluate_many(session, env, batch, now=now, scheduled=scheduled, dry_run=dry_run))[0]


async def evaluate_many(
    session: AsyncSession,
    env: DeliveryEnv,
    claimed: Sequence[tuple[Monitor, int | None]],
    *,
    now: datetime,
    scheduled: bool = True,
    dry_run: bool = False,
) -> list[Report]:
    """Evaluate the locked monitors at `now`; unless `dry_run`, add their events, deliveries and annotations to
    the session and leave each monitor row's new values in `report.row`: the caller writes them with `save` (one
    statement for a whole batch) and commits. `scheduled`: a run of the loop (it moves the schedule on), not an
    on-demand one. Queries of one shape share a statement (app/monitors/evaluation.py `observe_many`), and
    routes, alerts, events and deliveries are read and written for the whole batch at once, with the answers
    each monitor would get alone."""
    settings = env.settings
    windows = [window_for(m, now, settle_seconds=settings.monitor_match_settle_seconds) for m, _ in claimed]
    observed = await observe_many(
        await driver_connection(session),
        [(m, dataset_id, w) for (m, dataset_id), w in zip(claimed, windows, strict=True)],
        now,
        statement_timeout=settings.monitor_query_timeout_seconds,
        savepoint_open=session.info.get(SAVEPOINT_OPEN) is session.get_transaction(),
    )
    session.info[SAVEPOINT_OPEN] = session.get_transaction()
    routed = await routes_of(session, [m.id for m, _ in claimed])
    reports = []
    for (monitor, _), window, observation in zip(claimed, windows, observed, strict=True):
        report = _report(monitor, now, window, observation, routed[monitor.id])
        if any(c.notify for c in report.step.changes):
            report.notifier_ids = routed[monitor.id]
        report.events = [_event_row(monitor, c, window, observation, now, dry_run) for c in report.step.changes]
        if not dry_run:
            report.row = _row(monitor, report, scheduled)
        reports.append(report)
    changed = [r for r in reports if r.step.changes]
    if changed and not dry_run:
        # The monitors' alerts follow (app/routing): the pipeline notifies once the caller has committed.
        for report in changed:
            _write(session, env, report)
        await alerting.record_many(
            session,
            [
                alerting.Recording(
                    r.monitor,
                    r.before,
                    r.step,
                    link(env, r.monitor.id),
                    r.observation.error,
                    bool(routed[r.monitor.id]),
                    [e.id for e in r.events],
                )
                for r in changed
            ],
            now,
        )
    return reports


def _report(monitor: Monitor, now: datetime, window: Window, observed: Observation, notifiers: list[str]) -> Report:
    """Run the state machine. A firing alert is repeated to the monitor's own `notifiers` only: a routed alert
    repeats on its route's `repeat_interval`."""
    before = monitor.state
    if monitor.type == "threshold":
        rules = rules_of(monitor)
        if notifiers and monitor.repeat_interval_seconds:
            rules = replace(rules, repeat_seconds=monitor.repeat_interval_seconds)
        step = step_threshold(before, series_of(monitor), observed.result, rules, now=now.timestamp())  # type: ignore[arg-type]
    else:
        step = step_match(before, observed.result, monitor.resolvable)  # type: ignore[arg-type]
    return Report(monitor, now, window, before, step, observed)


def _write(session: AsyncSession, env: DeliveryEnv, report: Report) -> None:
    """Add the report's monitor events (their deliveries are added by the pipeline) and its annotation."""
    monitor = report.monitor
    session.add_all(report.events)
    changed = [c for c in report.step.changes if c.kind not in ("matched", "repeat")]
    if changed:
        _annotate(session, env, monitor, changed, report.now)


def _row(monitor: Monitor, report: Report, scheduled: bool) -> dict[str, Any]:
    step, observed = report.step, report.observation
    cursor = monitor.match_cursor
    if monitor.type == "match_event" and observed.error is None:
        cursor = report.window.until  # reported up to here; a failed run reports it next time
    due, last_due = monitor.next_evaluation_at, monitor.last_due_at
    if scheduled:
        last_due, due = due, next_due(due, report.now, monitor.interval_seconds)
    return {
        "v_id": monitor.id,
        "v_state": step.state,
        "v_series": msgspec.to_builtins(step.series),
        "v_last_value": step.value,
        "v_last_error": observed.error,
        "v_last_evaluated_at": report.now,
        "v_last_due_at": last_due,
        "v_next_evaluation_at": due,
        "v_match_cursor": cursor,
    }


_COLUMNS = (
    "state", "series", "last_value", "last_error", "last_evaluated_at", "last_due_at", "next_evaluation_at",
    "match_cursor",
)  # fmt: skip
_TABLE = cast(Table, Monitor.__table__)
# Core, not the ORM's bulk update: one statement executed for a batch of rows (`v_` names: SQLAlchemy reserves
# the column names for its own parameters).
_SAVE = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("v_id"))
    .values({name: bindparam(f"v_{name}", type_=_TABLE.c[name].type) for name in _COLUMNS})
)


async def save(session: AsyncSession, reports: Sequence[Report]) -> None:
    """Write the new state of every evaluated monitor: one statement, executed for all rows at once."""
    rows = [r.row for r in reports if r.row]
    if rows:
        await session.execute(_SAVE, rows)


def _event_row(
    monitor: Monitor, change: Change, window: Window, observed: Observation, now: datetime, dry_run: bool
) -> MonitorEvent:
    start, end = window.shown
    matched = change.kind == "matched"
    return MonitorEvent(
        id=None if dry_run else new_id("mev_"),
        monitor_id=monitor.id,
        kind=change.kind,
        state=change.state,
        value=change.value,
        threshold=monitor.threshold,
        group_values=change.group,
        start_time=start,
        end_time=end,
        match_count=observed.match_count if matched else None,
        matches=observed.matches if matched else [],
        error=observed.error if change.kind == "error" else None,
        delivery_ids=[],
        time=now,
    )


def iso_range_of(row: MonitorEvent) -> tuple[str | None, str | None]:
    return iso_ms_or_none(row.start_time), iso_ms_or_none(row.end_time)


def _describe(monitor: Monitor, change: Change) -> str:
    parts: list[str] = []
    if change.value is not None and monitor.threshold is not None:
        words = OPERATOR_WORDS.get(monitor.operator or "", monitor.operator or "")
        parts.append(f"value {number(change.value)} (threshold: {words} {number(monitor.threshold)})")
    if change.group:
        parts.append(", ".join(f"{k}={v}" for k, v in change.group.items()))
    return f"{KIND_WORDS[change.kind]}" + (f": {'; '.join(parts)}" if parts else "")


def _annotate(session: AsyncSession, env: DeliveryEnv, monitor: Monitor, changes: list[Change], now: datetime) -> None:
    """One `monitor` annotation per evaluation that changed state, on the dataset the query reads."""
    if len(changes) == 1:
        title = f"{monitor.name}: {KIND_WORDS[changes[0].kind]}"
    else:
        counts: dict[str, int] = {}
        for c in changes:
            counts[KIND_WORDS[c.kind]] = counts.get(KIND_WORDS[c.kind], 0) + 1
        title = f"{monitor.name}: " + ", ".join(f"{n} {word}" for word, n in counts.items())
    lines = [_describe(monitor, c) for c in changes[:20]]
    if len(changes) > 20:
        lines.append(f"… and {len(changes) - 20} more")
    add_annotation(
        session,
        type_="monitor",
        title=title,
        datasets=[monitor.dataset],
        time=now,
        description="\n".join(lines),
        url=link(env, monitor.id),
    )

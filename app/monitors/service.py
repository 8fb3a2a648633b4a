"""Creating, listing, changing, deleting and evaluating monitors; their history."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import msgspec
from msgspec import UNSET
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import monitor_filter, require_dataset
from app.auth import Principal
from app.db.advisory import Space, lock
from app.db.dataset import Dataset
from app.db.monitor import Monitor
from app.db.monitor_event import MonitorEvent
from app.db.monitor_notifier import MonitorNotifier
from app.db.notifier import Notifier
from app.errors import BeaconError, check_choice, not_found
from app.monitors import alerting, queries, runner
from app.monitors.evaluation import iso_range
from app.monitors.schemas import (
    STATES,
    EvaluationOut,
    GroupOut,
    MonitorCreate,
    MonitorEventOut,
    MonitorOut,
    MonitorSaved,
    MonitorUpdate,
    TriggerAfter,
    TriggerAfterOut,
)
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.query import fieldcheck
from app.query.compiler import Compiled
from app.request_ids import new_id
from app.result_warnings import ResultWarning
from app.routing.env import RoutingEnv
from app.routing.jobs import run_routing
from app.timefmt import iso_ms, iso_ms_or_none, utcnow
from app.timeparams import to_ms

MAX_GROUPS_SHOWN = 100
FIRST_RUN_SPREAD_SECONDS = 60  # new monitors start within min(interval, this): many made at once do not run in step


@dataclass
class Definition:
    """The user-settable fields of a monitor, as checked together (at creation and after a patch)."""

    name: str
    description: str | None
    type: str
    apl: str
    operator: str | None
    threshold: float | None
    interval_seconds: int
    range_seconds: int
    delay_seconds: int
    alert_on_no_data: bool
    notify_by_group: bool
    resolvable: bool
    trigger_after: TriggerAfter
    repeat_interval_seconds: int | None
    disabled_until: datetime | None
    labels: dict[str, str]


def _check(d: Definition, who: Principal, now: datetime) -> Compiled:
    """Raise the first problem with `d` as a 400 naming the field; return the query (with its dataset)."""
    if d.type == "threshold":
        for name in ("operator", "threshold"):
            if getattr(d, name) is None:
                raise BeaconError("missing_field", f"A threshold monitor needs `{name}`.", param=name)
    else:
        for name in ("operator", "threshold"):
            if getattr(d, name) is not None:
                raise BeaconError("invalid_field", f"`{name}` applies to threshold monitors only.", param=name)
        only_threshold = {
            "alert_on_no_data": d.alert_on_no_data,
            "notify_by_group": d.notify_by_group,
            "trigger_after": (d.trigger_after.m, d.trigger_after.n) != (1, 1),
            "repeat_interval_seconds": d.repeat_interval_seconds is not None,
        }
        for name, set_ in only_threshold.items():
            if set_:
                raise BeaconError(
                    "invalid_field",
                    f"`{name}` applies to threshold monitors only: a match_event monitor notifies every run that "
                    "finds new events.",
                    param=name,
                )
    d.labels = alerting.check_monitor_labels(d.labels)
    if d.trigger_after.m > d.trigger_after.n:
        raise BeaconError(
            "invalid_field", "`trigger_after.m` must not be greater than `trigger_after.n`.", param="trigger_after.m"
        )
    compiled = queries.check(d.type, d.apl, now=now, range_seconds=d.range_seconds, notify_by_group=d.notify_by_group)
    # A monitor reads its dataset on the token holder's behalf: a dataset-limited token may not watch others.
    require_dataset(who, compiled.query.dataset)
    return compiled


async def _check_notifiers(session: AsyncSession, ids: Sequence[str]) -> list[str]:
    unique = list(dict.fromkeys(ids))
    if not unique:
        return unique
    found = set((await session.execute(select(Notifier.id).where(Notifier.id.in_(unique)))).scalars())
    missing = [i for i in unique if i not in found]
    if missing:
        raise BeaconError("invalid_field", f"Unknown notifier id(s): {', '.join(missing)}.", param="notifier_ids")
    return unique


def _set_routes(session: AsyncSession, monitor_id: str, notifier_ids: list[str]) -> None:
    for position, notifier_id in enumerate(notifier_ids):
        session.add(MonitorNotifier(monitor_id=monitor_id, notifier_id=notifier_id, position=position))


async def _commit_routes(session: AsyncSession) -> None:
    """Commit; a notifier deleted between the check and the commit is the same 400 as an unknown one."""
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise BeaconError(
            "invalid_field", "A notifier in `notifier_ids` was just deleted.", param="notifier_ids"
        ) from None


def to_out(m: Monitor, notifier_ids: list[str]) -> MonitorOut:
    return MonitorOut(
        id=m.id,
        name=m.name,
        description=m.description,
        type=m.type,
        apl=m.apl,
        dataset=m.dataset,
        operator=m.operator,
        threshold=m.threshold,
        interval_seconds=m.interval_seconds,
        range_seconds=m.range_seconds,
        delay_seconds=m.delay_seconds,
        notifier_ids=notifier_ids,
        labels=dict(m.labels or {}),
        alert_on_no_data=m.alert_on_no_data,
        notify_by_group=m.notify_by_group,
        resolvable=m.resolvable,
        trigger_after=TriggerAfterOut(m.trigger_m, m.trigger_n),
        repeat_interval_seconds=m.repeat_interval_seconds,
        disabled_until=iso_ms_or_none(m.disabled_until),
        state=m.state,
        alerting_groups=_alerting_groups(m),
        last_value=m.last_value,
        last_error=m.last_error,
        last_evaluated_at=iso_ms_or_none(m.last_evaluated_at),
        next_evaluation_at=iso_ms(m.next_evaluation_at),
        created_at=iso_ms(m.created_at),
        updated_at=iso_ms(m.updated_at),
    )


def _alerting_groups(m: Monitor) -> list[dict[str, Any]]:
    if not m.notify_by_group:
        return []
    series = m.series or {}
    alerting = sorted(k for k, s in series.items() if s.get("state") == "alerting")
    return [series[k].get("group", {}) for k in alerting[:MAX_GROUPS_SHOWN]]


async def render(session: AsyncSession, monitor: Monitor) -> MonitorOut:
    return to_out(monitor, (await runner.routes_of(session, [monitor.id]))[monitor.id])


def _definition(data: MonitorCreate) -> Definition:
    return Definition(
        name=data.name,
        description=data.description,
        type=data.type,
        apl=data.apl,
        operator=data.operator,
        threshold=data.threshold,
        interval_seconds=data.interval_seconds,
        range_seconds=data.range_seconds if data.range_seconds is not None else data.interval_seconds,
        delay_seconds=data.delay_seconds,
        alert_on_no_data=data.alert_on_no_data,
        notify_by_group=data.notify_by_group,
        resolvable=data.resolvable,
        trigger_after=data.trigger_after,
        repeat_interval_seconds=data.repeat_interval_seconds,
        disabled_until=to_ms(data.disabled_until) if data.disabled_until else None,
        labels=data.labels,
    )


def _assign(monitor: Monitor, d: Definition, dataset: str) -> None:
    monitor.name = d.name
    monitor.description = d.description
    monitor.type = d.type
    monitor.apl = d.apl
    monitor.dataset = dataset
    monitor.operator = d.operator
    monitor.threshold = d.threshold
    monitor.interval_seconds = d.interval_seconds
    monitor.range_seconds = d.range_seconds
    monitor.delay_seconds = d.delay_seconds
    monitor.alert_on_no_data = d.alert_on_no_data
    monitor.notify_by_group = d.notify_by_group
    monitor.resolvable = d.resolvable
    monitor.trigger_m = d.trigger_after.m
    monitor.trigger_n = d.trigger_after.n
    monitor.repeat_interval_seconds = d.repeat_interval_seconds
    monitor.disabled_until = d.disabled_until
    monitor.labels = d.labels


async def _warnings(session: AsyncSession, who: Principal, compiled: Compiled) -> list[ResultWarning]:
    """What the query names that its dataset has never had (or that the dataset does not exist yet). Read before
    the monitor is committed: a check that fails leaves no monitor behind (a client told 500 must not find one)."""
    return await fieldcheck.stored_query_warnings(session, who, compiled.query.dataset, compiled.fields)


def _saved(out: MonitorOut, warnings: list[ResultWarning]) -> MonitorSaved:
    return MonitorSaved(**msgspec.structs.asdict(out), warnings=warnings)


async def create_monitor(session: AsyncSession, who: Principal, data: MonitorCreate) -> MonitorSaved:
    now = utcnow()
    d = _definition(data)
    compiled = _check(d, who, now)
    dataset = compiled.query.dataset
    notifier_ids = await _check_notifiers(session, data.notifier_ids)
    warnings = await _warnings(session, who, compiled)
    spread = min(d.interval_seconds, FIRST_RUN_SPREAD_SECONDS)
    monitor = Monitor(
        id=new_id("mon_"),
        state="ok",
        series={},
        last_value=None,
        last_error=None,
        last_evaluated_at=None,
        last_due_at=None,
        next_evaluation_at=max(now + timedelta(seconds=random.uniform(0, spread)), d.disabled_until or now),
        match_cursor=None,
        created_at=now,
        updated_at=now,
    )
    _assign(monitor, d, dataset)
    session.add(monitor)
    await session.flush()  # the monitor row before its routes (foreign key)
    _set_routes(session, monitor.id, notifier_ids)
    await _commit_routes(session)
    return _saved(to_out(monitor, notifier_ids), warnings)


async def get_monitor(session: AsyncSession, who: Principal, monitor_id: str, *, for_update: bool = False) -> Monitor:
    """The monitor, if `who` may see it: one over a dataset outside the token's is a 404, as an unknown id.

    `for_update`: held (an advisory lock on its id, not a row lock: on Citus `monitors` is a reference table) until
    the transaction ends, read once held; an evaluation of the loop holds it too (app/monitors/tick.py)."""
    if for_update:
        await lock(session, Space.MONITOR, monitor_id)
    stmt = select(Monitor).where(Monitor.id == monitor_id, monitor_filter(who))
    monitor = (await session.execute(stmt)).scalar_one_or_none()
    if monitor is None:
        raise not_found("monitor", monitor_id)
    return monitor


async def list_monitors(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    *,
    state: str | None,
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[MonitorOut]:
    if state is not None:
        check_choice(state, STATES, "state")
    stmt = select(Monitor).where(monitor_filter(who))
    if state is not None:
        stmt = stmt.where(Monitor.state == state)
    page: ListEnvelope[Monitor] = await paginate(
        session,
        stmt,
        codec=codec,
        scope=f"monitors:{msgspec.json.encode([state]).decode()}",
        keys=(Monitor.created_at, Monitor.id),
        render=lambda m: m,
        limit=limit,
        cursor=cursor,
    )
    routes = await runner.routes_of(session, [m.id for m in page.data])
    return ListEnvelope(
        data=[to_out(m, routes[m.id]) for m in page.data], has_more=page.has_more, next_cursor=page.next_cursor
    )


async def update_monitor(
    session: AsyncSession, who: Principal, monitor_id: str, data: MonitorUpdate, *, base_url: str
) -> MonitorSaved:
    monitor = await get_monitor(session, who, monitor_id, for_update=True)
    if data.type is not UNSET and data.type != monitor.type:
        raise BeaconError(
            "invalid_field", "A monitor's `type` cannot change; create a new monitor instead.", param="type"
        )
    now = utcnow()
    current = Definition(
        name=monitor.name,
        description=monitor.description,
        type=monitor.type,
        apl=monitor.apl,
        operator=monitor.operator,
        threshold=monitor.threshold,
        interval_seconds=monitor.interval_seconds,
        range_seconds=monitor.range_seconds,
        delay_seconds=monitor.delay_seconds,
        alert_on_no_data=monitor.alert_on_no_data,
        notify_by_group=monitor.notify_by_group,
        resolvable=monitor.resolvable,
        trigger_after=TriggerAfter(m=monitor.trigger_m, n=monitor.trigger_n),
        repeat_interval_seconds=monitor.repeat_interval_seconds,
        disabled_until=monitor.disabled_until,
        labels=dict(monitor.labels or {}),
    )
    before = (current.name, current.labels, current.apl)
    changes: dict[str, Any] = {
        name: getattr(data, name)
        for name in Definition.__dataclass_fields__
        if name != "type" and getattr(data, name) is not UNSET
    }
    if changes.get("disabled_until") is not None:
        changes["disabled_until"] = to_ms(changes["disabled_until"])
    d = Definition(**{**current.__dict__, **changes})
    compiled = _check(d, who, now)
    _assign(monitor, d, compiled.query.dataset)
    monitor.series = msgspec.to_builtins(runner.series_of(monitor))  # M of N changed: keep the last N
    # A shorter interval takes effect now, not after the longer one has run out.
    monitor.next_evaluation_at = min(monitor.next_evaluation_at, now + timedelta(seconds=monitor.interval_seconds))
    if "disabled_until" in changes:
        # Due when the pause ends (at once when re-enabled): a paused monitor is not even looked at meanwhile.
        monitor.next_evaluation_at = max(now, d.disabled_until or now)
    monitor.updated_at = now
    if data.notifier_ids is not UNSET:
        notifier_ids = await _check_notifiers(session, data.notifier_ids)
        await session.execute(delete(MonitorNotifier).where(MonitorNotifier.monitor_id == monitor.id))
        _set_routes(session, monitor.id, notifier_ids)
    if before != (d.name, d.labels, d.apl) or data.notifier_ids is not UNSET:
        # Its alerts carry the name, labels and dataset, and who sends them: report them anew.
        direct = (
            bool(notifier_ids) if data.notifier_ids is not UNSET else bool(await runner.routes(session, monitor.id))
        )
        await alerting.refresh(session, monitor, now, link=runner.link_for(base_url, monitor.id), direct=direct)
    warnings = await _warnings(session, who, compiled)
    await _commit_routes(session)
    return _saved(await render(session, monitor), warnings)


async def delete_monitor(session: AsyncSession, who: Principal, monitor_id: str) -> None:
    monitor = await get_monitor(session, who, monitor_id, for_update=True)
    await alerting.forget(session, monitor.id, utcnow())
    await session.delete(monitor)
    await session.commit()


def event_out(e: MonitorEvent) -> MonitorEventOut:
    return MonitorEventOut(
        id=e.id,
        monitor_id=e.monitor_id,
        kind=e.kind,
        state=e.state,
        value=e.value,
        threshold=e.threshold,
        group=e.group_values,
        time=iso_ms(e.time),
        start_time=iso_ms_or_none(e.start_time),
        end_time=iso_ms_or_none(e.end_time),
        match_count=e.match_count,
        matches=e.matches,
        error=e.error,
        deliveries=list(e.delivery_ids),
    )


async def history(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    monitor_id: str,
    *,
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[MonitorEventOut]:
    await get_monitor(session, who, monitor_id)
    return await paginate(
        session,
        select(MonitorEvent).where(MonitorEvent.monitor_id == monitor_id),
        codec=codec,
        scope=f"monitor-history:{monitor_id}",
        keys=(MonitorEvent.time, MonitorEvent.id),
        render=event_out,
        limit=limit,
        cursor=cursor,
    )


async def dataset_id(session: AsyncSession, name: str) -> int | None:
    found = await session.execute(select(Dataset.id).where(Dataset.name == name))
    return found.scalar_one_or_none()


async def evaluate_now(
    session: AsyncSession, renv: RoutingEnv, who: Principal, monitor_id: str, *, dry_run: bool
) -> tuple[EvaluationOut, int]:
    """Evaluate at once, waiting for a run of the loop in progress to finish (the monitor's lock); a real run then
    runs the router, which queues its messages. Returns the outcome and how many deliveries were queued."""
    env = renv.delivery
    monitor = await get_monitor(session, who, monitor_id, for_update=True)
    report = await runner.evaluate(
        session,
        env,
        monitor,
        await dataset_id(session, monitor.dataset),
        now=utcnow(),
        scheduled=False,
        dry_run=dry_run,
    )
    if dry_run:
        out = _evaluation_out(report, dry_run)
        await session.rollback()
        return out, 0
    await runner.save(session, [report])
    await session.commit()
    runner.note_outcomes(env, [report])
    queued = (await run_routing(renv, report.now)).queued if report.step.changes else 0
    if queued:  # the events list the deliveries the pipeline made of them
        for event in report.events:
            await session.refresh(event)
    return _evaluation_out(report, dry_run), queued


def _evaluation_out(report: runner.Report, dry_run: bool) -> EvaluationOut:
    start, end = iso_range(report.window)
    observed = report.observation
    return EvaluationOut(
        monitor_id=report.monitor.id,
        dry_run=dry_run,
        time=iso_ms(report.now),
        start_time=start,
        end_time=end,
        previous_state=report.before,
        state=report.step.state,
        value=report.step.value,
        error=observed.error,
        groups=[GroupOut(group=s.group, state=s.state, value=s.value) for s in report.step.series.values()],
        match_count=observed.match_count,
        matches=observed.matches,
        events=[event_out(e) for e in report.events],
        notifier_ids=report.notifier_ids,
    )

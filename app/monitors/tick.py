"""The monitor loop: a job of app/scheduler.py in every server process.

Each tick, up to `settings.monitor_concurrency` lanes (one per batch due: a statement counts them first) claim due
monitors (the most overdue first, up to `BATCH` per transaction) and evaluate each batch together
(app/monitors/runner.py `evaluate_many`), until nothing is due.
A claim is an advisory try-lock on each monitor's id (app/db/advisory.py), held until the batch commits: what
`FOR UPDATE SKIP LOCKED` did, without a row lock on `monitors`, which on Citus is a reference table (a row lock
there locks the whole table on every node: a claim waited 3.5 s instead of skipping, issue 32). The due ones are
read first, the free ones of them locked in one statement, and those read again once held (another process may
have evaluated one and committed meanwhile); ones held elsewhere are left to their holders.
Any number of processes share the work; a monitor is evaluated once per due time. When a batch changed alerts,
the router runs at once in this process once the batch is committed (the pipeline queues the messages: a
monitor's own route has no group_wait), and when that queued deliveries, the delivery worker is woken at once
instead of at its next poll.

A server runs the loop as its `MonitorLoop`: at every tick (a poll for what other processes scheduled) and at the
time the next monitor falls due, which each run reads as it ends: a monitor is evaluated at its time, not up to a
tick later.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.advisory import Space, try_lock_many
from app.db.dataset import Dataset
from app.db.engine import autocommit_connection
from app.db.monitor import Monitor
from app.deliveries.sending import DeliveryEnv
from app.deliveries.timers import Alarm
from app.deliveries.worker import Dispatcher, serve
from app.monitors import runner
from app.reruns import OneAtATime
from app.routing.env import RoutingEnv
from app.routing.jobs import run_routing
from app.timefmt import utcnow

log = logging.getLogger("beacon.monitors")
MAX_PER_TICK = 10_000  # evaluations per tick and process; a tick that has to stop leaves the rest due


@dataclass
class TickResult:
    evaluated: int = 0
    deliveries: int = 0
    lags: list[float] = field(default_factory=list)  # seconds from due to evaluated, per evaluation
    next_due_at: datetime | None = None  # when the next monitor falls due after the run


# Monitors claimed and evaluated per transaction: their queries of one shape share a statement, and their state,
# alerts, events and deliveries are written in a few statements for all of them.
BATCH = 250


def _due(now: datetime) -> Any:
    return and_(Monitor.next_evaluation_at <= now, or_(Monitor.disabled_until.is_(None), Monitor.disabled_until <= now))


# When the next monitor falls due after $1: the first one past $1 in the index monitors_due that is enabled by its
# time (one disabled until later is found due by a tick).
NEXT_DUE = """
SELECT next_evaluation_at FROM monitors
WHERE next_evaluation_at > $1 AND (disabled_until IS NULL OR disabled_until <= next_evaluation_at)
ORDER BY next_evaluation_at LIMIT 1"""
# How many monitors are due, counting no further than $2 (the condition of `_due`, through the index monitors_due),
# and when the next one falls due.
DUE_COUNT = f"""
SELECT (SELECT count(*) FROM (
            SELECT 1 FROM monitors
            WHERE next_evaluation_at <= $1 AND (disabled_until IS NULL OR disabled_until <= $1) LIMIT $2
        ) due) AS due,
       ({NEXT_DUE}) AS next"""


async def _lanes_wanted(env: DeliveryEnv, now: datetime, lanes: int, batch: int) -> tuple[int, datetime | None]:
    """The lanes worth starting (one per batch that is due, at most `lanes`) and when the next monitor falls due
    after `now`. Most ticks find nothing due; this one statement outside a transaction tells, where every lane's
    claim was a transaction of its own (each process, every second)."""
    async with autocommit_connection(env.sessionmaker.kw["bind"]) as conn:
        found = await conn.fetchrow(DUE_COUNT, now, lanes * batch)
    return min(lanes, -(-int(found["due"]) // batch)), found["next"]


async def _next_due(env: DeliveryEnv, now: datetime) -> datetime | None:
    async with autocommit_connection(env.sessionmaker.kw["bind"]) as conn:
        found: datetime | None = await conn.fetchval(NEXT_DUE, now)
    return found


async def _claim(
    session: AsyncSession, now: datetime, limit: int, monitor_id: str | None = None
) -> list[tuple[Monitor, int | None]]:
    """Up to `limit` due monitors this transaction now holds, the most overdue first, each with its dataset's id."""
    claimed: list[tuple[Monitor, int | None]] = []
    seen: list[str] = []  # read already: held here, held elsewhere, or no longer due
    while len(claimed) < limit:
        due = select(Monitor.id).where(_due(now), Monitor.id.not_in(seen))
        if monitor_id is not None:
            due = due.where(Monitor.id == monitor_id)
        due = due.order_by(Monitor.next_evaluation_at).limit(limit - len(claimed))
        ids = list((await session.execute(due)).scalars())
        if not ids:
            break
        seen.extend(ids)
        held = await try_lock_many(session, Space.MONITOR, ids)
        if held:
            dataset_id = select(Dataset.id).where(Dataset.name == Monitor.dataset).scalar_subquery()
            again = (
                select(Monitor, dataset_id)
                .where(Monitor.id.in_(held), _due(now))
                .order_by(Monitor.next_evaluation_at)
                .execution_options(populate_existing=True)
            )
            claimed.extend((m, d) for m, d in (await session.execute(again)).all())
    return claimed


async def claim_and_evaluate(
    env: DeliveryEnv, now: datetime | None = None, *, batch: int = BATCH
) -> list[runner.Report] | None:
    """Claim up to `batch` due monitors (the most overdue first) and evaluate them in one transaction; None
    when nothing is due. If something breaks, the batch is rolled back and its monitors go one by one, so that
    one broken monitor holds up no other."""
    at = now or utcnow()
    async with env.sessionmaker() as session:
        rows = await _claim(session, at, batch)
        if not rows:
            return None
        # What the recovery needs, read now: a rollback expires the loaded rows.
        claimed = [(m.id, m.next_evaluation_at, m.interval_seconds) for m, _ in rows]
        try:
            reports = await runner.evaluate_many(session, env, [(m, dataset_id) for m, dataset_id in rows], now=at)
            await runner.save(session, reports)
            await session.commit()
            runner.note_outcomes(env, reports)
            return reports
        except Exception:
            await session.rollback()
            if len(claimed) == 1:
                log.exception("evaluating monitor %s failed; it runs again at its next interval", claimed[0][0])
                await _postpone(env.sessionmaker, *claimed[0], now=at)
                return []
            log.warning("a batch of %d monitors failed; evaluating them one by one", len(claimed))
    reports = []
    for monitor_id, _, _ in claimed:
        reports.extend(await _one(env, at, monitor_id) or [])
    return reports


async def _one(env: DeliveryEnv, at: datetime, monitor_id: str) -> list[runner.Report] | None:
    async with env.sessionmaker() as session:
        rows = await _claim(session, at, 1, monitor_id)
        if not rows:
            return None  # another process has it, or has done it
        monitor, dataset_id = rows[0]
        due, interval = monitor.next_evaluation_at, monitor.interval_seconds
        try:
            report = await runner.evaluate(session, env, monitor, dataset_id, now=at, scheduled=True)
            await runner.save(session, [report])
            await session.commit()
            runner.note_outcomes(env, [report])
            return [report]
        except Exception:
            log.exception("evaluating monitor %s failed; it runs again at its next interval", monitor_id)
            await session.rollback()
    await _postpone(env.sessionmaker, monitor_id, due, interval, now=at)
    return []


async def _postpone(
    sessionmaker: async_sessionmaker[AsyncSession], monitor_id: str, due: datetime, interval: int, now: datetime
) -> None:
    """Move a monitor whose evaluation broke to its next due time, so that it cannot hold up the others by
    being claimed again at once (unless another process has moved it on already)."""
    async with sessionmaker() as session:
        await session.execute(
            update(Monitor)
            .where(Monitor.id == monitor_id, Monitor.next_evaluation_at == due)
            .values(next_evaluation_at=runner.next_due(due, now, interval))
        )
        await session.commit()


Route = Callable[[datetime], Awaitable[int]]  # run the router at a time; returns the deliveries it queued


def router_of(env: DeliveryEnv) -> Route:
    """The router a tick runs after its commits when the app gives none (tests, `beacon` commands)."""
    renv = RoutingEnv(env)

    async def route(at: datetime) -> int:
        return (await run_routing(renv, at)).queued

    return route


async def evaluate_due(
    env: DeliveryEnv,
    *,
    lanes: int,
    now: datetime | None = None,
    limit: int = MAX_PER_TICK,
    batch: int = BATCH,
    on_deliveries: Callable[[], None] | None = None,
    route: Route | None = None,
) -> TickResult:
    """Evaluate what is due: at most `limit` evaluations, `lanes` transactions at a time, each of up to `batch`
    monitors; after each batch that changed alerts, `route` (default: `router_of(env)`) at its time."""
    result = TickResult()
    claimed = 0
    router = route or router_of(env)
    lanes, result.next_due_at = await _lanes_wanted(env, now or utcnow(), max(1, lanes), batch)

    async def lane() -> None:
        nonlocal claimed
        while claimed < limit:
            size = min(batch, limit - claimed)
            claimed += size
            reports = await claim_and_evaluate(env, now, batch=size)
            if reports is None:
                return
            result.evaluated += len(reports)
            lags = [(r.now - r.row["v_last_due_at"]).total_seconds() for r in reports]
            result.lags.extend(lags)
            for lag in lags:
                env.metrics.monitor_lag.observe(lag)
            if not any(r.step.changes for r in reports):
                continue
            queued = await router(reports[0].now)
            if queued:
                result.deliveries += queued
                if on_deliveries is not None:
                    on_deliveries()

    await asyncio.gather(*(lane() for _ in range(lanes)))
    if lanes:  # the evaluations moved their monitors on
        result.next_due_at = await _next_due(env, now or utcnow())
    return result


async def run_tick(renv: RoutingEnv, dispatcher: Dispatcher) -> TickResult:
    """The scheduler job: evaluate what is due, route the alerts with the process's router (made with the
    scheduler) and wake the dispatcher for what was queued."""
    env = renv.delivery
    started = time.monotonic()
    result = await evaluate_due(
        env,
        lanes=env.settings.monitor_concurrency,
        on_deliveries=functools.partial(serve, dispatcher),
        route=renv.router.run_at,
    )
    if result.evaluated:
        log.debug(
            "evaluated %d monitors in %.3f s, %d deliveries queued",
            result.evaluated,
            time.monotonic() - started,
            result.deliveries,
        )
    return result


# A run has a cost of its own (a few statements in every process, whatever it evaluates): monitors falling due
# close together (1,000 on a 10 s interval: one every 10 ms) are evaluated together, at most this late, not each
# in a run of its own. bench/monitors.py's steady run: 0.1 s took twice the CPU of the tick alone, 0.25 s ~1.3x,
# for an evaluation lag at p99 of 76 and 200 ms against 476-874 ms.
COALESCE_SECONDS = 0.25


class MonitorLoop(OneAtATime):
    """This process's monitor loop (made with the scheduler): a run at each of the scheduler's ticks, a poll every
    `monitor_tick_seconds` for what other processes scheduled, and at the time the next monitor falls due, read
    as each run ends, and again after a monitor was created or changed here (`wake`)."""

    def __init__(self, renv: RoutingEnv, dispatcher: Dispatcher) -> None:
        super().__init__()
        self.renv = renv
        self.dispatcher = dispatcher
        self.alarm = Alarm(self.wake)  # when the next monitor falls due

    async def _run_once(self) -> None:
        """Evaluate what is due, then set the timer for the next monitor due before the next tick, but no sooner
        than `COALESCE_SECONDS` after this run began."""
        began = time.monotonic()
        try:
            result = await run_tick(self.renv, self.dispatcher)
        except Exception:  # as a failing tick always was: logged, and the next tick runs again
            log.exception("monitor loop run failed")
            return
        if result.next_due_at is not None and not self._stopped:
            delay = (result.next_due_at - utcnow()).total_seconds()
            if delay < self.renv.delivery.settings.monitor_tick_seconds:
                self.alarm.after(max(delay, began + COALESCE_SECONDS - time.monotonic()))

    async def stop(self) -> None:
        self.alarm.cancel()
        await super().stop()

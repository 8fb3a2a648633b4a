"""The routing job: place pending alerts in their groups, flush the groups that are due (the pipeline's
stages: app/routing/pipeline.py), and now and then forget long-resolved alerts. Run by this process's `Router`:
after a commit that wrote alerts, when the next group falls due, and every `BEACON_ROUTING_TICK_SECONDS`.

Each batch (placing, then flushing what is due) is one transaction over rows claimed with `SKIP LOCKED`, so any
number of processes share the work; a failure rolls back what it claimed, which the next run (here or
elsewhere) takes up again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

import asyncpg

from app.db.engine import autocommit_connection
from app.deliveries.timers import Alarm
from app.reruns import OneAtATime
from app.routing import config, routes, store
from app.routing.env import RoutingEnv
from app.routing.flush import FLUSH_BATCH, flush_batch
from app.routing.suppression import Suppressor, load

log = logging.getLogger("beacon.routing")
MAX_BATCHES = 500  # per run and step: a run that has to stop leaves the rest to the next
GC_EVERY = timedelta(minutes=10)
HELD_RETRIES = 3
HELD_RETRY_SECONDS = 0.05
# After a run: the next group due after the run's time, and whether a group due by then is still unflushed (another
# process is flushing it, or a flush failed). Two index lookups (alert_groups_due).
_NEXT_DUE = """
SELECT (SELECT min(next_flush_at) FROM alert_groups WHERE next_flush_at > $1) AS next,
       EXISTS (SELECT FROM alert_groups WHERE next_flush_at <= $1) AS held
"""


# What a poll reads first: whether anything waits to be placed, and when the next group falls due. Most polls (every
# process, every second) find nothing to do: this one statement outside a transaction tells, where a run is a
# transaction of five statements. Two index lookups (alerts_routing_pending, alert_groups_due).
_QUIET = """
SELECT EXISTS (SELECT FROM alerts WHERE routing_pending) AS pending,
       (SELECT min(next_flush_at) FROM alert_groups) AS next
"""


@dataclass
class RunResult:
    routed: int = 0
    groups_created: int = 0
    flushed: int = 0
    closed: int = 0
    queued: int = 0  # deliveries written
    next_flush_at: datetime | None = None  # when the next group falls due after the run's time
    held: bool = False  # a group due by the run's time was left unflushed: another process holds it


async def place_pending(env: RoutingEnv, now: datetime, result: RunResult) -> None:
    for _ in range(MAX_BATCHES):
        async with env.delivery.sessionmaker() as session:
            conn = await store.in_transaction(session)
            stored = await config.current(conn)
            placed = await store.route_pending(conn, stored.tree, now)
            await session.commit()
        result.routed += placed.routed
        result.groups_created += placed.groups_created
        env.counters.groups_created += placed.groups_created
        if placed.routed < store.ROUTE_BATCH:
            return


class _Suppression:
    """A run's suppression context and routes, read when a group is first due (and again if the tree changed
    meanwhile)."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.current: Suppressor | None = None

    async def of(self, conn: asyncpg.Connection) -> Suppressor:
        stored = await config.current(conn)
        if self.current is None or self.current.tree is not stored.tree:
            self.current = await load(conn, stored.tree, self.now)
            self.current.routes = await routes.load(conn, stored.tree)
        return self.current


async def collect_garbage(env: RoutingEnv, now: datetime) -> int:
    async with env.delivery.sessionmaker() as session:
        deleted = await store.collect_garbage(await store.in_transaction(session), now)
        await session.commit()
    return deleted


class Router(OneAtATime):
    """This process's router: runs the routing job when woken (after a commit that wrote alerts: a group that
    falls due with them is flushed at once, not at the next tick), at the time the next group falls due, and when
    the scheduler's tick asks (a poll for what another process changed). Wakes during a run coalesce into one more run.
    Made by the app's lifespan with the scheduler (tests without one drive `run_routing` themselves)."""

    def __init__(self, env: RoutingEnv, on_queued: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.env = env
        self.on_queued = on_queued
        self.alarm = Alarm(self.wake)  # when the next group falls due
        self._held = 0  # runs in a row that ended with a due group held elsewhere

    def poll(self) -> None:
        """The scheduler's tick, a poll for what no wake-up announced (another process's alerts): a run, unless one
        statement shows that nothing waits to be placed and no group is due."""
        self._start(self._poll)

    async def _poll(self) -> None:
        self._again = False
        quiet = await _quiet(self.env, self.env.now())
        if quiet is not None and not self._again:
            self._plan(quiet)
        else:  # work to do, or a wake-up came while the poll read (it asked this task to run once more)
            await self._runs()

    async def _run_once(self) -> None:
        await self.run_at(None)

    async def run_at(self, at: datetime | None) -> int:
        """One run of the job (at `at`, else now); returns the deliveries it queued."""
        result = await run_routing(self.env, at, self.on_queued)
        self._plan(result)
        return result.queued

    def _plan(self, result: RunResult) -> None:
        """The next wake-up: when the next group falls due (at once if it fell due during the run). A group due
        by the run's time that another process holds (flushing it) is looked at again shortly, a few times, and
        never delays the wake-up for the next group. One held for longer (a flush failing here or elsewhere) is
        left to the tick rather than spin this loop. Every process wakes at every group's time, and the first free
        one takes it: waking only the process that set the time (the others looking later) left a burst's second
        batch of groups to a process still sending the first (bench/RESULTS.md, 2026-12-01 evening)."""
        delays = []
        if result.next_flush_at is not None:
            delays.append(max((result.next_flush_at - self.env.now()).total_seconds(), 0.0))
        if result.held:
            self._held += 1
            if self._held <= HELD_RETRIES:
                delays.append(HELD_RETRY_SECONDS)
        else:
            self._held = 0
        if delays:
            self.alarm.after(min(delays))

    async def stop(self) -> None:
        self.alarm.cancel()
        await super().stop()


async def _quiet(env: RoutingEnv, at: datetime) -> RunResult | None:
    """A run's result when a run at `at` would do nothing (nothing to place, no group due, no garbage to collect
    yet), else None; None too when the database did not answer (the run then says why)."""
    if env.last_gc is None or at - env.last_gc >= GC_EVERY:
        return None
    try:
        async with autocommit_connection(env.delivery.sessionmaker.kw["bind"]) as conn:
            found = await conn.fetchrow(_QUIET)
    except Exception:
        return None
    if found["pending"] or (found["next"] is not None and found["next"] <= at):
        return None
    return RunResult(next_flush_at=found["next"])


def wake(env: RoutingEnv) -> None:
    """After a commit that wrote alerts: let this process's router place them, and flush what falls due."""
    if env.router is not None:
        env.router.wake()


async def place_and_flush(
    env: RoutingEnv, now: datetime, result: RunResult, on_queued: Callable[[], None] | None = None
) -> None:
    """`place_pending` and `flush_due` in one transaction per batch: a group that a new alert makes due is
    flushed in the transaction that placed it (one commit from the alert to its deliveries)."""
    suppression = _Suppression(now)
    for _ in range(MAX_BATCHES):
        async with env.delivery.sessionmaker() as session:
            conn = await store.in_transaction(session)
            placed = await store.route_pending(conn, (await config.current(conn)).tree, now)
            flushed = await flush_batch(session, conn, env, partial(suppression.of, conn), now)
            more = placed.routed >= store.ROUTE_BATCH or (flushed is not None and flushed.groups >= FLUSH_BATCH)
            if not more:
                due = await conn.fetchrow(_NEXT_DUE, now)
                result.next_flush_at, result.held = due["next"], due["held"]
            await session.commit()
        result.routed += placed.routed
        result.groups_created += placed.groups_created
        env.counters.groups_created += placed.groups_created
        if flushed is not None:
            if flushed.sent and on_queued is not None:
                on_queued()  # the delivery worker starts on this batch while the next is flushed
            result.flushed += flushed.groups
            result.closed += flushed.closed
            result.queued += len(flushed.sent)
            env.counters.flushes += flushed.groups
            env.counters.notified([reason for _, _, reason in flushed.sent])
        if not more:
            return


async def run_routing(
    env: RoutingEnv, now: datetime | None = None, on_queued: Callable[[], None] | None = None
) -> RunResult:
    """One run of the job at `now` (else the env's clock); `on_queued` after each commit that queued deliveries."""
    at = now or env.now()
    result = RunResult()
    try:
        await place_and_flush(env, at, result, on_queued)
        if env.last_gc is None or at - env.last_gc >= GC_EVERY:
            env.last_gc = at
            await collect_garbage(env, at)
    except Exception:
        log.exception("routing run failed; the next run takes up what is left")
    return result

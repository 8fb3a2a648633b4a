"""The routing job (app/scheduler.py, every `BEACON_ROUTING_TICK_SECONDS` in every process): place pending
alerts in their groups, flush the groups that are due, and now and then forget long-resolved alerts.

Each step is its own transaction over rows claimed with `SKIP LOCKED`, so any number of processes share the
work; a failure rolls back what it claimed, which the next run (here or elsewhere) takes up again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

import asyncpg

from app.routing import config, store
from app.routing.env import RoutingEnv
from app.routing.flush import flush_batch
from app.routing.suppression import Suppressor, load

log = logging.getLogger("beacon.routing")
MAX_BATCHES = 500  # per run and step: a run that has to stop leaves the rest to the next
GC_EVERY = timedelta(minutes=10)


@dataclass
class RunResult:
    routed: int = 0
    groups_created: int = 0
    flushed: int = 0
    closed: int = 0
    queued: int = 0  # deliveries written
    next_flush_at: datetime | None = None  # when the next group falls due (when the run ended)


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
    """A run's suppression context, read when a group is first due (and again if the tree changed meanwhile)."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.current: Suppressor | None = None

    async def of(self, conn: asyncpg.Connection) -> Suppressor:
        stored = await config.current(conn)
        if self.current is None or self.current.tree is not stored.tree:
            self.current = await load(conn, stored.tree, self.now)
        return self.current


async def flush_due(env: RoutingEnv, now: datetime, result: RunResult) -> None:
    suppression = _Suppression(now)
    for _ in range(MAX_BATCHES):
        async with env.delivery.sessionmaker() as session:
            conn = await store.in_transaction(session)
            flushed = await flush_batch(session, conn, env, partial(suppression.of, conn), now)
            if flushed is None:
                result.next_flush_at = await conn.fetchval("SELECT min(next_flush_at) FROM alert_groups")
                return
            await session.commit()
        result.flushed += flushed.groups
        result.closed += flushed.closed
        result.queued += len(flushed.sent)
        env.counters.flushes += flushed.groups
        env.counters.notified([reason for _, _, reason in flushed.sent])


async def collect_garbage(env: RoutingEnv, now: datetime) -> int:
    async with env.delivery.sessionmaker() as session:
        deleted = await store.collect_garbage(await store.in_transaction(session), now)
        await session.commit()
    return deleted


class Timer:
    """One wake-up per process for the next group that falls due between two runs of the job, so that a group
    notifies `group_wait` after it formed rather than up to a tick later."""

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def at(self, delay: float, run: Callable[[], Awaitable[None]]) -> None:
        loop = asyncio.get_running_loop()
        if self._handle is not None and not self._handle.cancelled() and self._handle.when() <= loop.time() + delay:
            return  # an earlier wake-up is set already; it looks again when it runs
        if self._handle is not None:
            self._handle.cancel()
        self._handle = loop.call_later(delay, self._fire, run)

    def _fire(self, run: Callable[[], Awaitable[None]]) -> None:
        self._handle = None
        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def run_routing(env: RoutingEnv, now: datetime | None = None) -> RunResult:
    at = now or env.now()
    result = RunResult()
    try:
        await place_pending(env, at, result)
        await flush_due(env, at, result)
        if env.last_gc is None or at - env.last_gc >= GC_EVERY:
            env.last_gc = at
            await collect_garbage(env, at)
    except Exception:
        log.exception("routing run failed; the next run takes up what is left")
    return result

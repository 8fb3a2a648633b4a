"""The routing job (app/scheduler.py, every `BEACON_ROUTING_TICK_SECONDS` in every process): place pending
alerts in their groups, flush the groups that are due, and now and then forget long-resolved alerts.

Each step is its own transaction over rows claimed with `SKIP LOCKED`, so any number of processes share the
work; a failure rolls back what it claimed, which the next run (here or elsewhere) takes up again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

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


async def flush_due(env: RoutingEnv, now: datetime, result: RunResult) -> None:
    suppressor: Suppressor | None = None
    for _ in range(MAX_BATCHES):
        async with env.delivery.sessionmaker() as session:
            conn = await store.in_transaction(session)
            stored = await config.current(conn)
            if suppressor is None or suppressor.tree is not stored.tree:
                suppressor = await load(conn, stored.tree, now)
            flushed = await flush_batch(session, conn, env, suppressor, now)
            if flushed is None:
                return
            await session.commit()
        result.flushed += flushed.groups
        result.closed += flushed.closed
        result.queued += len(flushed.sent)
        env.counters.flushes += flushed.groups
        env.counters.notifications.update(reason for _, _, reason in flushed.sent)


async def collect_garbage(env: RoutingEnv, now: datetime) -> int:
    async with env.delivery.sessionmaker() as session:
        deleted = await store.collect_garbage(await store.in_transaction(session), now)
        await session.commit()
    return deleted


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

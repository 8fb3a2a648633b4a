"""The monitor loop: a job of app/scheduler.py in every server process.

Each tick, `settings.monitor_concurrency` lanes claim due monitors one at a time (`FOR UPDATE SKIP LOCKED`, the
most overdue first) and evaluate each in its own transaction (app/monitors/runner.py), until nothing is due.
Any number of processes share the work; a monitor is evaluated once per due time. When a run queued
deliveries, the process's delivery worker is woken at once instead of at its next poll.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.dataset import Dataset
from app.db.monitor import Monitor
from app.deliveries.sending import DeliveryEnv
from app.monitors import runner
from app.timefmt import utcnow

log = logging.getLogger("beacon.monitors")
MAX_PER_TICK = 10_000  # evaluations per tick and process; a tick that has to stop leaves the rest due


@dataclass
class TickResult:
    evaluated: int = 0
    deliveries: int = 0
    lags: list[float] = field(default_factory=list)  # seconds from due to evaluated, per evaluation


def _claim(now: datetime) -> Any:
    dataset_id = select(Dataset.id).where(Dataset.name == Monitor.dataset).scalar_subquery()
    return (
        select(Monitor, dataset_id)
        .where(
            Monitor.next_evaluation_at <= now,
            or_(Monitor.disabled_until.is_(None), Monitor.disabled_until <= now),
        )
        .order_by(Monitor.next_evaluation_at)
        .limit(1)
        .with_for_update(of=Monitor, skip_locked=True)
    )


async def claim_and_evaluate(env: DeliveryEnv, now: datetime | None = None) -> runner.Report | None:
    """Claim the most overdue monitor and evaluate it; None when nothing is due."""
    at = now or utcnow()
    async with env.sessionmaker() as session:
        row = (await session.execute(_claim(at))).first()
        if row is None:
            return None
        monitor, dataset_id = row
        due = monitor.next_evaluation_at
        try:
            report = await runner.evaluate(session, env, monitor, dataset_id, now=at, scheduled=True)
            await session.commit()
            return report
        except Exception:
            log.exception("evaluating monitor %s failed; it runs again at its next interval", monitor.id)
            await session.rollback()
    await _postpone(env.sessionmaker, monitor.id, due, at, monitor.interval_seconds)
    return None


async def _postpone(
    sessionmaker: async_sessionmaker[AsyncSession], monitor_id: str, due: datetime, now: datetime, interval: int
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


async def evaluate_due(
    env: DeliveryEnv,
    *,
    lanes: int,
    now: datetime | None = None,
    limit: int = MAX_PER_TICK,
    on_deliveries: Callable[[], None] | None = None,
) -> TickResult:
    """Evaluate what is due (at most `limit` evaluations, `lanes` at a time)."""
    result = TickResult()
    claimed = 0

    async def lane() -> None:
        nonlocal claimed
        while claimed < limit:
            claimed += 1
            report = await claim_and_evaluate(env, now)
            if report is None:
                return
            result.evaluated += 1
            if report.monitor.last_due_at is not None:
                result.lags.append((report.now - report.monitor.last_due_at).total_seconds())
            if report.deliveries:
                result.deliveries += report.deliveries
                if on_deliveries is not None:
                    on_deliveries()

    await asyncio.gather(*(lane() for _ in range(max(1, lanes))))
    return result


class Wake:
    """Runs a job now (in this process), at most one run at a time; a wake during a run asks for one more."""

    def __init__(self, run: Callable[[], Awaitable[Any]]) -> None:
        self._run = run
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def __call__(self) -> None:
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while True:
            self._again = False
            try:
                await self._run()
            except Exception:
                log.exception("woken delivery run failed; the worker's own poll retries")
            if not self._again:
                return

    async def wait(self) -> None:
        """Wait for a run in progress (tests, shutdown)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


def delivery_wake(app_state: Any) -> Wake:
    """The process's wake-up for its delivery worker (made on first use)."""
    wake = app_state.get("monitor_delivery_wake")
    if wake is None:
        from app.deliveries.worker import deliver_due

        wake = Wake(lambda: deliver_due(app_state))
        app_state["monitor_delivery_wake"] = wake
    return wake


async def run_tick(app_state: Any) -> TickResult:
    """The scheduler job."""
    env: DeliveryEnv = app_state.delivery_env
    started = time.monotonic()
    result = await evaluate_due(env, lanes=env.settings.monitor_concurrency, on_deliveries=delivery_wake(app_state))
    if result.evaluated:
        log.debug(
            "evaluated %d monitors in %.3f s, %d deliveries queued",
            result.evaluated,
            time.monotonic() - started,
            result.deliveries,
        )
    return result

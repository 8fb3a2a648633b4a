"""Periodic jobs on APScheduler 3.x's AsyncIOScheduler, in the app's own event loop.

Started by the app's lifespan only when `settings.run_scheduler` is true. Each area adds its job with one
line in `job_specs()`; a job is an async function of the app's Services, run every `interval(settings)` seconds,
never two runs of the same job at once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from app.datasets.retention import apply_retention
from app.db.warm import WARM_EVERY_SECONDS, keep_one_open
from app.deliveries.worker import serve
from app.services import Services
from app.settings import Settings

log = logging.getLogger("beacon.scheduler")


@dataclass(frozen=True)
class JobSpec:
    id: str
    run: Callable[[Services], Awaitable[None]]
    interval: Callable[[Settings], float]  # seconds between runs
    at_start: bool = False  # the first run when the scheduler starts, not one interval (at most a minute) later


async def _retention(services: Services) -> None:
    report = await apply_retention(services.engine, datetime.now(UTC), partitions=services.ingest_caches.partitions)
    if report.dropped or report.deleted_rows or report.skipped:
        log.info(
            "retention: dropped %d partitions, deleted %d rows, skipped %s",
            len(report.dropped),
            report.deleted_rows,
            report.skipped,
        )


async def _deliveries(services: Services) -> None:
    serve(services.dispatcher)  # claims what is due and returns; the sends run in the background


async def _monitors(services: Services) -> None:
    """Through the loop (made with the scheduler): a run its timer started then runs once more, where a run of
    its own would wait for that one."""
    loop = services.monitor_loop
    assert loop is not None
    loop.wake()
    await loop.idle()


async def _routing(services: Services) -> None:
    """A poll for what no wake-up announced. Through the router: a run under way then runs once more, where a run
    of its own would race it for the same rows."""
    router = services.routing_env.router
    router.poll()
    await router.idle()


async def _connections(services: Services) -> None:
    await keep_one_open([services.read_pool, services.query_pool, *await services.rate_limiter.pools()])


def job_specs() -> list[JobSpec]:
    return [
        JobSpec("retention", _retention, lambda s: s.retention_interval_seconds),
        # A poll for what no wake-up announced (another process's retries, ended mutes); sends run concurrently.
        JobSpec("deliveries", _deliveries, lambda s: s.delivery_poll_seconds),
        JobSpec("monitors", _monitors, lambda s: s.monitor_tick_seconds),
        JobSpec("routing", _routing, lambda s: s.routing_tick_seconds),
        # The first request after a start or a quiet spell finds a connection open in each pool.
        JobSpec("connections", _connections, lambda s: WARM_EVERY_SECONDS, at_start=True),
    ]


def _guarded(spec: JobSpec, services: Services) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        try:
            await spec.run(services)
        except Exception:  # a failing run is logged and retried at the next interval
            log.exception("scheduled job %s failed", spec.id)

    return run


def start_scheduler(services: Services, specs: list[JobSpec] | None = None) -> AsyncIOScheduler:
    scheduler = AsyncIOScheduler(timezone=UTC)
    now = datetime.now(UTC)
    for spec in job_specs() if specs is None else specs:
        seconds = spec.interval(services.settings)
        scheduler.add_job(
            _guarded(spec, services),
            "interval",
            seconds=seconds,
            id=spec.id,
            max_instances=1,
            coalesce=True,
            next_run_time=now if spec.at_start else now + timedelta(seconds=min(seconds, 60.0)),
        )
    scheduler.start()
    return scheduler

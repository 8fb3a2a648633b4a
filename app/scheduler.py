"""Periodic jobs on APScheduler 3.x's AsyncIOScheduler, in the app's own event loop.

Started by the app's lifespan only when `settings.run_scheduler` is true. Each area adds its job with one
line in `job_specs()`; a job is an async function of the app, run every `interval(settings)` seconds, never
two runs of the same job at once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from litestar import Litestar

from app.settings import Settings

log = logging.getLogger("beacon.scheduler")


@dataclass(frozen=True)
class JobSpec:
    id: str
    run: Callable[[Litestar], Awaitable[None]]
    interval: Callable[[Settings], float]  # seconds between runs


async def _retention(app: Litestar) -> None:
    from app.datasets.retention import apply_retention

    caches = app.state.get("ingest_caches")
    report = await apply_retention(
        app.state.engine, datetime.now(UTC), partitions=caches.partitions if caches is not None else None
    )
    if report.dropped or report.deleted_rows or report.skipped:
        log.info(
            "retention: dropped %d partitions, deleted %d rows, skipped %s",
            len(report.dropped),
            report.deleted_rows,
            report.skipped,
        )


async def _deliveries(app: Litestar) -> None:
    from app.deliveries.worker import serve

    serve(app.state)  # claims what is due and returns; the sends run in the background


async def _monitors(app: Litestar) -> None:
    from app.monitors.tick import run_tick

    await run_tick(app.state)


async def _routing(app: Litestar) -> None:
    await app.state.routing_env.router.run_at(None)  # a poll for what no wake-up announced


def job_specs() -> list[JobSpec]:
    return [
        JobSpec("retention", _retention, lambda s: s.retention_interval_seconds),
        # A poll for what no wake-up announced (another process's retries, ended mutes); sends run concurrently.
        JobSpec("deliveries", _deliveries, lambda s: s.delivery_poll_seconds),
        JobSpec("monitors", _monitors, lambda s: s.monitor_tick_seconds),
        JobSpec("routing", _routing, lambda s: s.routing_tick_seconds),
    ]


def _guarded(spec: JobSpec, app: Litestar) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        try:
            await spec.run(app)
        except Exception:  # a failing run is logged and retried at the next interval
            log.exception("scheduled job %s failed", spec.id)

    return run


def start_scheduler(app: Litestar, settings: Settings, specs: list[JobSpec] | None = None) -> AsyncIOScheduler:
    scheduler = AsyncIOScheduler(timezone=UTC)
    now = datetime.now(UTC)
    for spec in job_specs() if specs is None else specs:
        seconds = spec.interval(settings)
        scheduler.add_job(
            _guarded(spec, app),
            "interval",
            seconds=seconds,
            id=spec.id,
            max_instances=1,
            coalesce=True,
            next_run_time=now + timedelta(seconds=min(seconds, 60.0)),
        )
    scheduler.start()
    return scheduler

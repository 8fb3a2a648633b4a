"""Per-dataset retention: drop whole daily partitions where every dataset in them has expired, else delete.

A partition holds one UTC day of every dataset. It is dropped (cheap, returns the space at once) when each
dataset with rows in it has a `retention_days` whose cutoff is past the day's end. Otherwise expired rows are
deleted from it, dataset by dataset. Which datasets a partition holds: those whose recorded days
(`datasets.first_day` / `last_day`, which ingest widens in the transaction that writes the events) span the day,
each asked by its id whether it has a row there (one index probe each, all in one round trip). No statement
scans a partition across datasets: on Citus each goes to one dataset's shard (a recursive skip scan over the
index, which this replaced, is refused there).

The per-minute counts (`event_rollups`, app/ingest/rollups.py) go in the same transaction as the events they
count. Cutoffs are whole minutes, so a minute's count is either all expired or all kept. A dataset's rows are
deleted while it is held exclusively (an advisory lock on its id: app/datasets/holds.py), which waits for its
ingests in flight (they hold it shared): a late event written into the expired range meanwhile cannot be
deleted from one table and not the other. One
pass runs at a time across processes (an advisory lock): every `beacon serve` process runs this job.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.advisory import Space, lock
from app.db.engine import driver_connection
from app.ingest.partitions import PartitionCache, day_date, partition_day
from app.ingest.timestamps import DAY_US, datetime_to_us, us_to_datetime

log = logging.getLogger("beacon.retention")

_PASS_LOCK = "hashtext('beacon-retention')"


_DELETE_COUNTS = "DELETE FROM event_rollups WHERE dataset_id = $1 AND minute >= $2 AND minute < $3"


@dataclass
class RetentionReport:
    dropped: list[str] = field(default_factory=list)
    deleted_rows: int = 0
    skipped: list[str] = field(default_factory=list)  # partitions whose lock was not granted in time


async def apply_retention(
    engine: AsyncEngine, now: datetime, *, partitions: PartitionCache | None = None, lock_timeout_ms: int = 5000
) -> RetentionReport:
    report = RetentionReport()
    # Statements run in autocommit on a pooled connection: each DROP or DELETE stands alone, so a long
    # retention pass never holds locks for longer than one partition's work.
    async with engine.connect() as conn:
        raw = await driver_connection(conn)
        if not await raw.fetchval(f"SELECT pg_try_advisory_lock({_PASS_LOCK})"):
            return report  # another process is running a pass now
        try:
            return await _apply(raw, now, report, partitions, lock_timeout_ms)
        finally:
            await raw.execute(f"SELECT pg_advisory_unlock({_PASS_LOCK})")


async def _apply(
    raw: asyncpg.Connection,
    now: datetime,
    report: RetentionReport,
    partitions: PartitionCache | None,
    lock_timeout_ms: int,
) -> RetentionReport:
    datasets = await raw.fetch("SELECT id, retention_days, first_day, last_day FROM datasets")
    minute = now.replace(second=0, microsecond=0)
    cutoff_times = {
        r["id"]: minute - timedelta(days=r["retention_days"]) for r in datasets if r["retention_days"] is not None
    }
    cutoffs = {i: datetime_to_us(t) for i, t in cutoff_times.items()}
    if not cutoffs:
        return report
    latest_cutoff = max(cutoffs.values())
    oldest_cutoff = min(cutoffs.values())
    names = await raw.fetch(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'events'::regclass ORDER BY c.relname"
    )
    for record in names:
        name = record["relname"]
        day = partition_day(name)
        if day is None or day * DAY_US >= latest_cutoff:
            continue  # nothing in it can have expired yet
        day_end = (day + 1) * DAY_US
        present = await _datasets_in(raw, name, day, datasets)
        droppable = all(i in cutoffs and day_end <= cutoffs[i] for i in present)
        if droppable and (present or day_end <= oldest_cutoff):
            try:
                async with raw.transaction():
                    await raw.execute(f"SET LOCAL lock_timeout = {int(lock_timeout_ms)}")
                    await raw.execute(f'DROP TABLE "{name}"')
                    for dataset_id in present:
                        await raw.execute(
                            _DELETE_COUNTS, dataset_id, us_to_datetime(day * DAY_US), us_to_datetime(day_end)
                        )
            except asyncpg.LockNotAvailableError:
                report.skipped.append(name)
                continue
            if partitions is not None:
                partitions.forget([day])
            report.dropped.append(name)
            log.info("retention: dropped partition %s (%s)", name, day_date(day))
            continue
        for dataset_id in present:
            cutoff = cutoffs.get(dataset_id)
            if cutoff is None or cutoff <= day * DAY_US:
                continue
            try:
                async with raw.transaction():
                    await raw.execute(f"SET LOCAL lock_timeout = {int(lock_timeout_ms)}")
                    await lock(raw, Space.DATASET, dataset_id)
                    upto = min(cutoff_times[dataset_id], us_to_datetime(day_end))
                    await raw.execute(_DELETE_COUNTS, dataset_id, us_to_datetime(day * DAY_US), upto)
                    status = await raw.execute(
                        f'DELETE FROM "{name}" WHERE dataset_id = $1 AND time < $2',
                        dataset_id,
                        cutoff_times[dataset_id],
                    )
            except (asyncpg.LockNotAvailableError, asyncpg.DeadlockDetectedError):
                # An ingest holding the dataset that widens its days meanwhile can deadlock with us: the next pass
                # tries again.
                report.skipped.append(f"{name} (dataset {dataset_id})")
                continue
            report.deleted_rows += int(status.split()[-1])
    return report


async def _datasets_in(raw: asyncpg.Connection, partition: str, day: int, datasets: list[asyncpg.Record]) -> list[int]:
    """The ids of the datasets with rows in the partition of `day`: of those whose recorded days span it (all
    days for one with none recorded), those that have a row there, asked by id."""
    when = day_date(day)
    spanning = [
        r["id"]
        for r in datasets
        if r["first_day"] is None or r["last_day"] is None or r["first_day"] <= when <= r["last_day"]
    ]
    if not spanning:
        return []
    # The name is built from a date (partition_day matched it), never from input text.
    found = await raw.fetchmany(
        f'SELECT $1::integer, EXISTS (SELECT 1 FROM "{partition}" WHERE dataset_id = $1)', [(i,) for i in spanning]
    )
    return sorted(r[0] for r in found if r[1])

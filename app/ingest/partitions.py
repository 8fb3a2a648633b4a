"""Daily partitions of `events`, created on demand, safely when several requests want the same day at once.

A partition is created on its own short connection, committed at once, so it never waits for (or holds up)
the ingest transaction that needs it: the table is created standalone and then ATTACHed, which takes only a
SHARE UPDATE EXCLUSIVE lock on `events` and so does not wait for COPYs in flight. An advisory lock per day
plus `IF NOT EXISTS` makes two creators of the same day agree. Known days are cached per process; a day
dropped by retention in another process is noticed when COPY cannot route a row (see service.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

import asyncpg

from app.db.advisory import Space, lock

PARTITION_PREFIX = "events_"
_EPOCH_DATE = date(1970, 1, 1)


def day_date(day: int) -> date:
    return _EPOCH_DATE + timedelta(days=day)


def day_number(d: date) -> int:
    return (d - _EPOCH_DATE).days


def partition_name(day: int) -> str:
    return f"{PARTITION_PREFIX}{day_date(day):%Y%m%d}"


def partition_day(name: str) -> int | None:
    """The day number of a partition name, or None for a table that is not one of ours."""
    if not name.startswith(PARTITION_PREFIX):
        return None
    try:
        parsed = datetime.strptime(name[len(PARTITION_PREFIX) :], "%Y%m%d").date()
    except ValueError:
        return None
    return day_number(parsed)


def _bound(day: int) -> str:
    return datetime.combine(day_date(day), datetime.min.time(), UTC).isoformat()


async def existing_days(conn: asyncpg.Connection) -> set[int]:
    rows = await conn.fetch(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'events'::regclass"
    )
    return {d for d in (partition_day(r["relname"]) for r in rows) if d is not None}


async def create_partition(conn: asyncpg.Connection, day: int) -> bool:
    """Create and attach the partition for `day` unless it exists; True when this call created it."""
    name = partition_name(day)
    async with conn.transaction():
        await lock(conn, Space.PARTITION_DAY, day)  # the second key is the day number
        attached = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass($1) "
            "AND inhparent = 'events'::regclass)",
            name,
        )
        if attached:
            return False
        # The name is built from a date, never from input text, so it is safe to splice into DDL.
        await conn.execute(
            f'CREATE TABLE IF NOT EXISTS "{name}" (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)'
        )
        await conn.execute(
            f"ALTER TABLE events ATTACH PARTITION \"{name}\" FOR VALUES FROM ('{_bound(day)}') TO ('{_bound(day + 1)}')"
        )
    return True


class PartitionCache:
    """The days whose partitions this process knows to exist."""

    def __init__(self) -> None:
        self.known: set[int] = set()

    def forget(self, days: Iterable[int]) -> None:
        self.known.difference_update(days)

    async def ensure(self, dsn: str, days: Iterable[int]) -> int:
        """Make sure every day in `days` has its partition; returns how many were created."""
        missing = set(days) - self.known
        if not missing:
            return 0
        created = 0
        conn = await asyncpg.connect(dsn, server_settings={"application_name": "beacon-partitions"})
        try:
            present = await existing_days(conn)
            for day in sorted(missing - present):
                created += await create_partition(conn, day)
            self.known |= present | missing
        finally:
            await conn.close()
        return created

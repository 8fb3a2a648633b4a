"""Test-only event loader: writes events straight into the partitioned table, as ingest would store them.

Kept apart from the ingest code (built elsewhere): creates the dataset row and the daily partitions with
plain SQL, then COPYs the rows and recounts the dataset's per-minute rollup. Event dicts hold `_time`
(datetime) and flat dot-path fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import orjson

from app.settings import asyncpg_dsn


async def ensure_partitions(conn: asyncpg.Connection, days: Iterable[datetime]) -> None:
    for day in sorted({d.astimezone(UTC).date() for d in days}):
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        end = start + timedelta(days=1)
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS events_p{start:%Y%m%d} PARTITION OF events "
            f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
        )


async def recount(conn: asyncpg.Connection, dataset_id: int) -> None:
    """The dataset's per-minute counts (`event_rollups`), as ingest keeps them, recounted from its events."""
    async with conn.transaction():
        await conn.execute("DELETE FROM event_rollups WHERE dataset_id = $1", dataset_id)
        await conn.execute(
            "INSERT INTO event_rollups (dataset_id, minute, count) SELECT dataset_id,"
            " date_bin('1 minute', time, TIMESTAMPTZ '1970-01-01 00:00:00+00'), count(*)"
            " FROM events WHERE dataset_id = $1 GROUP BY 1, 2",
            dataset_id,
        )


async def _dataset_id(conn: asyncpg.Connection, dataset: str) -> int:
    """The dataset's id, created if needed."""
    return int(
        await conn.fetchval(
            "INSERT INTO datasets (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name "
            "RETURNING id",
            dataset,
        )
    )


async def load_events(database_url: str, dataset: str, events: list[dict[str, Any]]) -> int:
    """Store `events` in `dataset` (created if needed); returns the dataset id."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        dataset_id = await _dataset_id(conn, dataset)
        now = datetime.now(UTC)
        rows = []
        for event in events:
            fields = dict(event)
            time = fields.pop("_time")
            rows.append((dataset_id, time, now, orjson.dumps(fields).decode()))
        await ensure_partitions(conn, [r[1] for r in rows])
        await conn.copy_records_to_table("events", records=rows, columns=["dataset_id", "time", "sys_time", "data"])
        await recount(conn, dataset_id)
        return int(dataset_id)
    finally:
        await conn.close()


async def load_generated(database_url: str, dataset: str, count: int, start: datetime, step_ms: int = 1000) -> int:
    """`count` events one `step_ms` apart from `start`, generated inside PostgreSQL (fast for big sets):
    {"n": i, "service": one of 4, "msg": "event i", "duration_ms": i % 1000}."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        dataset_id = await _dataset_id(conn, dataset)
        last = start + timedelta(milliseconds=step_ms * max(count - 1, 0))
        days = [start + timedelta(days=d) for d in range((last.date() - start.date()).days + 1)]
        await ensure_partitions(conn, days)
        await conn.execute(
            """
            INSERT INTO events (dataset_id, time, sys_time, data)
            SELECT $1, $2::timestamptz + make_interval(secs => i * $4::int / 1000.0), now(),
                   jsonb_build_object('n', i, 'service', (ARRAY['api', 'web', 'db', 'queue'])[i % 4 + 1],
                                      'msg', 'event ' || i, 'duration_ms', i % 1000)
            FROM generate_series(0, $3 - 1) AS i
            """,
            dataset_id,
            start,
            count,
            step_ms,
        )
        await recount(conn, dataset_id)
        return int(dataset_id)
    finally:
        await conn.close()

"""The per-minute rollup of event counts (`event_rollups`), written by ingest in the request's transaction.

Charts and counts read it instead of the events (app/query/rollup.py), so it must always equal what the events
say: ingest adds its counts just before it commits (the rows it locks are held only for the commit), retention
and dataset deletion remove counts in the transaction that removes the events. Minutes are written in
ascending order, so two requests adding to the same minutes wait for each other instead of deadlocking.
"""

from __future__ import annotations

import asyncpg

_ADD = """
INSERT INTO event_rollups AS r (dataset_id, minute, count)
SELECT $1::integer, to_timestamp(u.m * 60), u.n FROM unnest($2::bigint[], $3::bigint[]) AS u(m, n) ORDER BY u.m
ON CONFLICT (dataset_id, minute) DO UPDATE SET count = r.count + EXCLUDED.count
"""


async def add_counts(conn: asyncpg.Connection, dataset_id: int, minutes: dict[int, int]) -> None:
    """Add `minutes` (UTC minute since 1970 -> events) to the dataset's rollup, in the caller's transaction."""
    if not minutes:
        return
    keys = sorted(minutes)
    await conn.execute(_ADD, dataset_id, keys, [minutes[k] for k in keys])

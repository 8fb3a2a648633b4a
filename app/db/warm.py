"""A serving process keeps one connection of each of its asyncpg pools open, so that the first request after a
start or a quiet spell does not wait to connect: on a fresh `beacon serve`, the first `POST /api/v2/alerts` took
~30 ms against ~9 ms for the next ones, the first alert of an incident after a quiet spell the same (bench/RESULTS.md).

The pools themselves still open nothing before the app starts (it starts, and /healthz answers, while the database
is down: asyncpg's floor, `min_size`, would connect inside `create_pool`), and they still close what a burst opened
once it has been idle for asyncpg's limit (5 minutes). This job runs at start and then more often than that limit:
it takes and gives back one connection of each pool, which connects it if it is not, and restarts its idle clock.
"""

from __future__ import annotations

from collections.abc import Iterable

import asyncpg

from app.db.unavailable import database_unavailable

WARM_EVERY_SECONDS = 120.0  # under asyncpg's `max_inactive_connection_lifetime` (300 s)


async def keep_one_open(pools: Iterable[asyncpg.Pool]) -> None:
    """Take and give back one connection of each pool. While the database is unavailable, nothing: the next run
    tries again (the other jobs report the outage)."""
    for pool in pools:
        try:
            async with pool.acquire():
                pass
        except Exception as exc:
            if not database_unavailable(exc):
                raise

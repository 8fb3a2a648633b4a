"""A serving process keeps one connection of each pool open (app/db/warm.py): the first request after a start or a
quiet spell does not wait to connect. Measured: the first `POST /api/v2/alerts` of a fresh `beacon serve` ~30 ms
against ~9 ms for the next ones, before (bench/RESULTS.md)."""

from __future__ import annotations

import asyncio

import asyncpg

from app.db.reads import open_read_pool
from app.db.warm import keep_one_open
from app.settings import asyncpg_dsn
from tests.servers import free_port

CONNECTED = """
SELECT application_name, count(*) AS n FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY application_name
"""


async def _connected(admin: asyncpg.Connection) -> dict[str, int]:
    return {r["application_name"]: r["n"] for r in await admin.fetch(CONNECTED)}


async def test_a_pool_keeps_one_connection_open_and_opens_it_again_after_it_was_cut(database_url: str) -> None:
    admin = await asyncpg.connect(asyncpg_dsn(database_url))
    pool = await open_read_pool(database_url)
    try:
        assert pool.get_size() == 0  # the app starts while the database is down: no connection at start
        await keep_one_open([pool])
        assert pool.get_size() == 1 and (await _connected(admin)).get("beacon-reads") == 1
        # The server cuts it (a restart, an idle timeout, a failover): the next run opens it again.
        # Only this test's database: other tests' apps run read pools of the same name at the same time.
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'beacon-reads' AND datname = current_database()"
        )
        for _ in range(100):
            if pool.get_size() == 0:
                break
            await asyncio.sleep(0.02)
        assert pool.get_size() == 0
        await keep_one_open([pool])
        assert pool.get_size() == 1 and (await _connected(admin)).get("beacon-reads") == 1
        assert await pool.fetchval("SELECT 1") == 1
    finally:
        await pool.close()
        await admin.close()


async def test_nothing_is_raised_while_the_database_is_unreachable() -> None:
    pool = await open_read_pool(f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere")
    try:
        await keep_one_open([pool])  # the next run tries again
        assert pool.get_size() == 0
    finally:
        await pool.close()


async def test_a_serving_app_has_each_pool_connected_before_its_first_request(app_client, database_url: str) -> None:
    """With the scheduler (as `beacon serve` runs), the read pool, the query pool and the budgets' pool (kept in
    PostgreSQL, as with several workers and no Redis) each hold a connection before any request came."""
    admin = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with app_client(run_scheduler=True, rate_limit_store="postgres"):
            for _ in range(250):
                seen = await _connected(admin)
                if seen.get("beacon-reads") and seen.get("beacon-queries") and seen.get("beacon-budgets"):
                    break
                await asyncio.sleep(0.02)
            assert seen.get("beacon-reads") == 1 and seen.get("beacon-queries") == 1, seen
            assert seen.get("beacon-budgets") == 1, seen
    finally:
        await admin.close()

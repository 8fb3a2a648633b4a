"""Migration 0014_rollups counts the events already stored, so counts served from the rollup are right at once
after an upgrade; its downgrade removes what it added."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from alembic import command

from app.db.migrate import alembic_config, upgrade
from app.settings import asyncpg_dsn


async def _admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture
def blank_database(pg_server_url: str, db_prefix: str):
    name = f"{db_prefix}_rollup_migration"
    asyncio.run(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    asyncio.run(_admin(pg_server_url, f'CREATE DATABASE "{name}"'))
    yield urlunsplit(urlsplit(pg_server_url)._replace(path=f"/{name}"))
    asyncio.run(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def test_upgrade_counts_stored_events_and_downgrade_removes_the_rollup(blank_database: str) -> None:
    upgrade(blank_database, "0010_routing")

    async def load() -> None:
        conn = await asyncpg.connect(asyncpg_dsn(blank_database))
        try:
            await conn.execute("INSERT INTO datasets (name) VALUES ('a'), ('b')")
            for day in ("20261101", "20261102"):
                nxt = f"2026-11-{int(day[-2:]) + 1:02d}"
                await conn.execute(
                    f"CREATE TABLE events_{day} PARTITION OF events FOR VALUES FROM "
                    f"('{day[:4]}-{day[4:6]}-{day[6:]} 00:00+00') TO ('{nxt} 00:00+00')"
                )
            # Every 7 seconds over 26 hours across the day boundary, for two datasets.
            await conn.execute(
                "INSERT INTO events (dataset_id, time, sys_time, data) SELECT d.id,"
                " TIMESTAMPTZ '2026-11-01 22:00:00+00' + make_interval(secs => i * 7), now(), '{}'"
                " FROM generate_series(0, 13370) AS i, datasets d"
            )
        finally:
            await conn.close()

    asyncio.run(load())
    upgrade(blank_database)

    async def compare() -> tuple[list[asyncpg.Record], list[asyncpg.Record]]:
        conn = await asyncpg.connect(asyncpg_dsn(blank_database), server_settings={"timezone": "UTC"})
        try:
            counted = await conn.fetch(
                "SELECT dataset_id, date_bin('1 minute', time, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS minute,"
                " count(*) FROM events GROUP BY 1, 2 ORDER BY 1, 2"
            )
            rolled = await conn.fetch("SELECT dataset_id, minute, count FROM event_rollups ORDER BY 1, 2")
            return counted, rolled
        finally:
            await conn.close()

    counted, rolled = asyncio.run(compare())
    assert len(counted) > 3000 and [tuple(r) for r in rolled] == [tuple(r) for r in counted]

    command.downgrade(alembic_config(blank_database), "0010_routing")

    async def tables() -> set[str]:
        conn = await asyncpg.connect(asyncpg_dsn(blank_database))
        try:
            rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            return {r[0] for r in rows}
        finally:
            await conn.close()

    left = asyncio.run(tables())
    assert "events" in left and not {"event_rollups", "rate_limit_hits"} & left

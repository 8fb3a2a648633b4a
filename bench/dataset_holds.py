"""Benchmark: what the Citus-ready statements (issue 32) cost on one PostgreSQL.

    .venv/bin/python bench/dataset_holds.py [--server-url postgresql://...] [--rounds 3000]

1. Holding a dataset in an ingest transaction: before, `SELECT id ... FOR KEY SHARE` (one statement); now the id,
   a shared advisory lock on it and the row read again (three; app/datasets/holds.py). Each in a transaction that
   writes (BEGIN, a transaction id, the hold, COMMIT), interleaved, medians.
2. A query: before, a narrow-range statement found its dataset by name inside itself; now its id is read first
   (one statement more). The same query timed both ways on the query pool's kind of session, interleaved.

On a fresh database of the given server (dropped afterwards), 20,000 events of one dataset in the last hour.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import time
from datetime import UTC, datetime, timedelta

import asyncpg
import orjson

from app.db.migrate import upgrade
from app.query.compiler import Compiled
from app.query.parser import parse

NAME = "beacon_bench_holds"


async def _timed(conn: asyncpg.Connection, work) -> float:
    began = time.perf_counter()
    await work(conn)
    return (time.perf_counter() - began) * 1e6


async def main(server: str, rounds: int) -> None:
    admin = await asyncpg.connect(server)
    await admin.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{NAME}"')
    url = server.rsplit("/", 1)[0] + "/" + NAME
    try:
        await asyncio.to_thread(upgrade, url)
        conn = await asyncpg.connect(url)
        dataset_id = await conn.fetchval("INSERT INTO datasets (name) VALUES ('web') RETURNING id")
        now = datetime.now(UTC).replace(microsecond=0)
        day = now.date()
        name = f"events_{day:%Y%m%d}"
        await conn.execute(
            f"CREATE TABLE \"{name}\" PARTITION OF events FOR VALUES FROM ('{day}') TO ('{day + timedelta(days=1)}')"
        )
        rows = [
            (dataset_id, now - timedelta(seconds=i % 3000), now, orjson.dumps({"status": 200 + i % 5}).decode())
            for i in range(20_000)
        ]
        await conn.executemany("INSERT INTO events VALUES ($1, $2, $3, $4::jsonb)", rows)
        await conn.execute("UPDATE datasets SET first_day = $1, last_day = $1", day)
        await conn.execute("ANALYZE")

        # Both transactions write (as an ingest does: a transaction id and a commit record either way), so what
        # differs is the hold alone: a row lock also writes the row, an advisory lock does not.
        async def row_lock(c: asyncpg.Connection) -> None:
            async with c.transaction():
                await c.fetchval("SELECT pg_current_xact_id()")
                await c.fetchval("SELECT id FROM datasets WHERE name = $1 FOR KEY SHARE", "web")

        async def advisory(c: asyncpg.Connection) -> None:
            async with c.transaction():
                await c.fetchval("SELECT pg_current_xact_id()")
                found = await c.fetchval("SELECT id FROM datasets WHERE name = $1", "web")
                await c.execute("SELECT pg_advisory_xact_lock_shared($1, $2)", 0x0B7A0002, found)
                await c.fetchval("SELECT 1 FROM datasets WHERE id = $1", found)

        compiled = Compiled(
            parse("['web'] | where status == 503 | summarize count() by bin(_time, 1m)"),
            now=now,
            start=now - timedelta(minutes=15),
            end=now,
        )
        by_id = compiled.statement(dataset_id, limit=1001, newest_first=True)
        n = re.search(r"dataset_id = \$(\d+)::integer", by_id.sql)
        assert n is not None
        by_name = f"dataset_id = (SELECT id FROM datasets WHERE name = ${n[1]}::text)"
        by_name_sql = by_id.sql.replace(n[0], by_name)
        at = int(n[1]) - 1

        async def query_by_name(c: asyncpg.Connection) -> None:
            await c.fetch(by_name_sql, *by_id.args[:at], "web", *by_id.args[at + 1 :])

        async def query_id_first(c: asyncpg.Connection) -> None:
            found = await c.fetchrow("SELECT id, first_day, last_day FROM datasets WHERE name = $1", "web")
            await c.fetch(by_id.sql, *by_id.args[:at], found[0], *by_id.args[at + 1 :])

        await conn.execute("SET plan_cache_mode = force_custom_plan")  # as the query pool's sessions
        for label, pair in (
            ("hold a dataset (ingest)", (row_lock, advisory)),
            ("narrow query", (query_by_name, query_id_first)),
        ):
            times: dict[str, list[float]] = {pair[0].__name__: [], pair[1].__name__: []}
            for _ in range(50):  # warm-up: prepared statements, caches
                for work in pair:
                    await work(conn)
            for _ in range(rounds):
                for work in pair:
                    times[work.__name__].append(await _timed(conn, work))
            before, after = (statistics.median(times[w.__name__]) for w in pair)
            first, second = pair[0].__name__, pair[1].__name__
            print(f"{label}: {first} {before:.0f} µs, {second} {after:.0f} µs (+{after - before:.0f} µs)")
        await conn.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--rounds", type=int, default=3000)
    args = parser.parse_args()
    asyncio.run(main(args.server_url, args.rounds))

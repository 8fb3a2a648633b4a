"""Retention: whole partitions dropped where every dataset in them expired, rows deleted elsewhere; the job."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from app.datasets.retention import apply_retention
from app.db.engine import make_engine
from app.ingest.partitions import PartitionCache
from tests.integration.ingest.util import ndjson, post_events, stored

NOW = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)


def days_ago(n: int, hour: int = 12) -> str:
    return (NOW - timedelta(days=n)).replace(hour=hour).isoformat()


async def partitions(db) -> list[str]:
    sql = "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid ORDER BY 1"
    async with db() as s:
        return list((await s.execute(text(sql))).scalars())


def name_of(days: int) -> str:
    return f"events_{NOW - timedelta(days=days):%Y%m%d}"


async def test_drops_whole_days_and_deletes_in_shared_ones(client, auth, db, database_url):
    # `short` keeps 2 days; `forever` has no retention and shares day -5 with `short`.
    await post_events(client, auth, "short", ndjson([{"_time": days_ago(d), "d": d} for d in (0, 1, 3, 4, 5)]))
    await post_events(client, auth, "forever", ndjson([{"_time": days_ago(5), "d": 5}]))
    await client.patch("/v1/datasets/short", headers=auth, json={"retention_days": 2})
    cache = PartitionCache()
    cache.known |= {int((NOW - timedelta(days=d)).timestamp() // 86400) for d in range(6)}
    engine = make_engine(database_url, pool_size=1)
    try:
        report = await apply_retention(engine, NOW, partitions=cache)
    finally:
        await engine.dispose()
    assert sorted(report.dropped) == sorted([name_of(3), name_of(4)])
    assert report.deleted_rows == 1  # `short`'s event on day -5, beside `forever`'s
    assert name_of(5) in await partitions(db) and name_of(3) not in await partitions(db)
    assert sorted(r["data"]["d"] for r in await stored(db, "short")) == [0, 1]
    assert [r["data"]["d"] for r in await stored(db, "forever")] == [5]
    assert not cache.known & {int((NOW - timedelta(days=d)).timestamp() // 86400) for d in (3, 4)}


async def test_nothing_expires_without_retention(client, auth, db, database_url):
    await post_events(client, auth, "web", ndjson([{"_time": days_ago(400)}]))
    engine = make_engine(database_url, pool_size=1)
    try:
        report = await apply_retention(engine, NOW)
    finally:
        await engine.dispose()
    assert report.dropped == [] and report.deleted_rows == 0
    assert len(await stored(db)) == 1


async def test_the_scheduled_job_applies_retention(make_app, auth, db):
    from litestar.testing import AsyncTestClient

    app = make_app(run_scheduler=True, retention_interval_seconds=0.2)
    async with AsyncTestClient(app=app) as client:
        await post_events(client, auth, "web", ndjson([{"_time": days_ago(10), "old": True}, {"new": True}]))
        await client.patch("/v1/datasets/web", headers=auth, json={"retention_days": 1})
        for _ in range(100):  # at most 10 s
            if len(await stored(db)) == 1:
                break
            await asyncio.sleep(0.1)
        assert [r["data"] for r in await stored(db)] == [{"new": True}]

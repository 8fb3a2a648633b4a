"""Daily partitions: created on demand across day boundaries, concurrently, and again after a drop."""

from __future__ import annotations

import asyncio

from litestar.testing import AsyncTestClient
from sqlalchemy import text

from app.ingest.partitions import PartitionCache
from app.settings import asyncpg_dsn
from tests.integration.ingest.util import ndjson, post_events, stored


async def partitions(db) -> list[str]:
    sql = (
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'events'::regclass ORDER BY 1"
    )
    async with db() as s:
        return list((await s.execute(text(sql))).scalars())


async def test_events_across_midnight_land_in_their_day(client, auth, db):
    events = [
        {"_time": "2026-11-21T23:59:59.999999Z", "n": 1},
        {"_time": "2026-11-22T00:00:00Z", "n": 2},
        {"_time": "2026-11-22T01:00:00+02:00", "n": 3},  # 2026-11-21T23:00Z
        {"_time": "2027-01-01T00:00:00Z", "n": 4},
    ]
    r = await post_events(client, auth, "web", ndjson(events))
    assert r.json()["ingested"] == 4
    assert await partitions(db) == ["events_20261121", "events_20261122", "events_20270101"]
    placed = {row["data"]["n"]: row["partition"] for row in await stored(db)}
    assert placed == {1: "events_20261121", 2: "events_20261122", 3: "events_20261121", 4: "events_20270101"}
    # The partitions carry the (dataset_id, time) index of the parent.
    async with db() as s:
        indexes = (await s.execute(text("SELECT indexdef FROM pg_indexes WHERE tablename = 'events_20261121'"))).all()
    assert any('(dataset_id, "time")' in i.indexdef for i in indexes)


async def test_concurrent_requests_create_the_same_days(make_app, auth, db):
    """Separate apps stand for separate server processes: none knows the other is creating the day."""
    days = [{"_time": f"2026-10-{d:02d}T12:00:00Z", "d": d} for d in range(1, 11)]
    apps = [make_app() for _ in range(3)]
    async with AsyncTestClient(app=apps[0]) as a, AsyncTestClient(app=apps[1]) as b, AsyncTestClient(app=apps[2]) as c:
        results = await asyncio.gather(
            *(post_events(cl, auth, "web", ndjson(days)) for cl in (a, b, c) for _ in range(2))
        )
    assert [r.status_code for r in results] == [200] * 6, [r.text for r in results]
    assert len(await partitions(db)) == 10
    assert len(await stored(db)) == 60


async def test_partition_caches_racing_directly(database_url, db):
    dsn = asyncpg_dsn(database_url)
    caches = [PartitionCache() for _ in range(6)]
    created = await asyncio.gather(*(cache.ensure(dsn, range(20000, 20005)) for cache in caches))
    assert sum(created) == 5  # each day created exactly once, nobody failed
    assert len(await partitions(db)) == 5


async def test_day_dropped_elsewhere_is_created_again(client, auth, db):
    await post_events(client, auth, "web", ndjson([{"_time": "2026-11-21T10:00:00Z", "n": 1}]))
    async with db() as s:  # as retention in another process would
        await s.execute(text("DROP TABLE events_20261121"))
        await s.commit()
    r = await post_events(client, auth, "web", ndjson([{"_time": "2026-11-21T11:00:00Z", "n": 2}]))
    assert r.status_code == 200, r.text
    assert [row["data"]["n"] for row in await stored(db)] == [2]

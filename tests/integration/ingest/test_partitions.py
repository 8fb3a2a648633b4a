"""Daily partitions: created on demand across day boundaries, concurrently, and again after a drop."""

from __future__ import annotations

import asyncio
import gzip
from datetime import UTC, datetime, timedelta

import asyncpg
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


async def recorded_days(db, dataset: str) -> tuple[str | None, str | None]:
    async with db() as s:
        row = (await s.execute(text("SELECT first_day, last_day FROM datasets WHERE name = :n"), {"n": dataset})).one()
    return tuple(None if d is None else d.isoformat() for d in row)  # type: ignore[return-value]


async def test_a_request_writes_to_at_most_100_days(client, auth, db):
    start = datetime(2001, 1, 1, tzinfo=UTC)
    events = [{"_time": (start + timedelta(days=d, hours=d % 24)).isoformat(), "d": d} for d in range(150)]
    events += [{"_time": (start + timedelta(days=5)).isoformat(), "d": 5}]  # a day already in the request
    result = (await post_events(client, auth, "web", ndjson(events))).json()
    assert (result["ingested"], result["failed"]) == (101, 50)
    first = result["failures"][0]
    assert first["index"] == 100
    assert "2001-04-11" in first["error"] and "at most 100 different days" in first["error"]
    assert len(await partitions(db)) == 100
    # The next request starts afresh.
    result = (await post_events(client, auth, "web", ndjson(events[100:150]))).json()
    assert (result["ingested"], result["failed"]) == (50, 0)
    assert len(await partitions(db)) == 150


async def test_the_days_a_dataset_has_events_in_are_recorded(client, auth, db):
    two = [{"_time": "2026-11-21T10:00:00Z"}, {"_time": "2026-11-23T23:59:59Z"}]
    await post_events(client, auth, "web", ndjson(two))
    assert await recorded_days(db, "web") == ("2026-11-21", "2026-11-23")
    await post_events(client, auth, "web", ndjson([{"_time": "2026-11-22T10:00:00Z"}]))  # within: unchanged
    await post_events(client, auth, "web", ndjson([{"_time": "2025-01-01T00:00:00Z"}]))
    assert await recorded_days(db, "web") == ("2025-01-01", "2026-11-23")
    # A refused request records nothing (rows and days go together).
    body = gzip.compress(ndjson([{"_time": "2030-01-01T00:00:00Z"}] * 7000))
    r = await post_events(client, auth, "web", body[:-20], headers={"content-encoding": "gzip"})
    assert r.status_code == 400
    assert await recorded_days(db, "web") == ("2025-01-01", "2026-11-23")
    # Each dataset has its own days.
    await post_events(client, auth, "other", ndjson([{"_time": "2020-05-05T05:05:05Z"}]))
    assert await recorded_days(db, "other") == ("2020-05-05", "2020-05-05")
    assert await recorded_days(db, "web") == ("2025-01-01", "2026-11-23")


async def test_a_query_reads_only_the_days_of_its_dataset(app_client, auth, db, database_url):
    """Another dataset's partitions are outside the query's days: PostgreSQL prunes them when it plans, so it
    does not even lock them. (Before, a query with no start_time planned every partition before now: over a
    second with 2,000 of them.)"""
    async with app_client(query_timeout_seconds=3) as client:
        spread = [{"_time": f"20{y:02d}-0{m}-01T00:00:00Z", "n": 1} for y in range(2, 12) for m in range(1, 10)]
        assert (await post_events(client, auth, "wide", ndjson(spread))).json()["ingested"] == 90
        recent = [{"_time": f"2026-11-2{d}T12:00:00Z", "n": d} for d in range(1, 4)]
        assert (await post_events(client, auth, "narrow", ndjson(recent))).json()["ingested"] == 3
        conn = await asyncpg.connect(asyncpg_dsn(database_url))
        try:
            async with conn.transaction():
                # As a long DDL or a VACUUM FULL on a partition of the other dataset would.
                await conn.execute("LOCK TABLE events_20050101 IN ACCESS EXCLUSIVE MODE")
                for body in (
                    {"apl": "['narrow'] | count"},
                    {"apl": "['narrow'] | take 10"},
                    {"apl": "['narrow'] | count", "start_time": "2000-01-01T00:00:00Z"},
                    {"apl": "['narrow'] | count", "end_time": "2099-01-01T00:00:00Z"},
                ):
                    r = await client.post("/v1/query", headers=auth, json=body)
                    assert r.status_code == 200, (body, r.text)
                    assert r.json()["rows"][0][0] == 3 or len(r.json()["rows"]) == 3
                    assert r.json()["status"]["min_time"].startswith("2026-11-21")
                export = await client.post("/v1/export", headers=auth, json={"apl": "['narrow']"})
                assert export.status_code == 200 and len(export.text.splitlines()) == 3
                # The other dataset's own queries do wait for its locked partition: the lock is real.
                r = await client.post("/v1/query", headers=auth, json={"apl": "['wide'] | count"})
                assert r.status_code == 400 and r.json()["error"]["code"] == "query_timeout"
        finally:
            await conn.close()

"""Counts from the per-minute rollup equal the events' answer: the same data, ingested through the API across a
day (partition) boundary with late events, queried over ranges that do and do not start on a minute, before and
after retention cuts into it; dataset deletion takes its counts with it."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from app.datasets.retention import apply_retention
from app.db.engine import make_engine
from app.query.compiler import Compiled
from app.query.parser import parse
from app.query.rollup import rollup_statement
from app.query.service import DEFAULT_ROWS
from tests.integration.ingest.util import ndjson, post_events

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Midnight two days ago: the events run over three partitions (days).
MIDNIGHT = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)


def iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def truth(times: list[datetime], span: timedelta, start: datetime, end: datetime) -> dict[object, int]:
    return dict(Counter(EPOCH + (t - EPOCH) // span * span for t in times if start <= t < end))


async def answer(client, auth, apl: str, start: datetime, end: datetime) -> dict[object, int]:
    r = await client.post(
        "/v1/query", headers=auth, json={"apl": apl, "start_time": iso(start), "end_time": iso(end), "take": 50_000}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert not body["status"]["truncated"]
    if len(body["columns"]) == 1:
        return {"total": body["rows"][0][0]}
    return {datetime.fromisoformat(row[0]): row[1] for row in body["rows"]}


def served_by_rollup(apl: str, start: datetime, end: datetime) -> bool:
    compiled = Compiled(parse(apl), now=datetime.now(UTC), start=start, end=end)
    events = compiled.statement(1, limit=DEFAULT_ROWS, newest_first=True)
    return rollup_statement(compiled, events, DEFAULT_ROWS, 1) is not None


SPANS = [timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=7), timedelta(hours=1), timedelta(days=1)]
RANGES = [  # (start, end) around the day boundary at MIDNIGHT + 1 day, on and off whole minutes
    (MIDNIGHT, MIDNIGHT + timedelta(days=2)),
    (MIDNIGHT + timedelta(hours=20, seconds=17), MIDNIGHT + timedelta(days=1, hours=3, seconds=43)),
    (MIDNIGHT + timedelta(hours=23, minutes=59, seconds=30), MIDNIGHT + timedelta(days=1, minutes=2, seconds=1)),
    (MIDNIGHT + timedelta(hours=5, microseconds=1), MIDNIGHT + timedelta(days=1, hours=5, microseconds=-1)),
]


async def check_all(client, auth, times: list[datetime]) -> None:
    for start, end in RANGES:
        for span in SPANS:
            minutes = int(span.total_seconds() // 60)
            apl = f"['web'] | summarize count() by bin(_time, {minutes}m)"
            assert served_by_rollup(apl, start, end)
            events_apl = f"['web'] | where true | summarize count() by bin(_time, {minutes}m)"
            assert not served_by_rollup(events_apl, start, end)
            expected = truth(times, span, start, end)
            assert await answer(client, auth, apl, start, end) == expected, (start, end, span)
            assert await answer(client, auth, events_apl, start, end) == expected, (start, end, span)
        total = sum(start <= t < end for t in times)
        for apl in ("['web'] | count", "['web'] | summarize count()"):
            assert served_by_rollup(apl, start, end)
            assert await answer(client, auth, apl, start, end) == {"total": total}


async def test_the_rollup_equals_the_events_across_days_late_events_and_retention(client, auth, db, database_url):
    rng = random.Random(19)
    # Dense around the day boundary, sparse elsewhere; the sub-second part matters at the ranges' edges.
    near = [MIDNIGHT + timedelta(days=1, seconds=rng.uniform(-1800, 1800)) for _ in range(1500)]
    spread = [MIDNIGHT + timedelta(seconds=rng.uniform(0, 2 * 86400 - 1)) for _ in range(1500)]
    times = [t.replace(microsecond=t.microsecond // 1000 * 1000) for t in near + spread]
    for i in range(0, 2000, 500):  # several requests into the same minutes: each adds to the counts
        await post_events(client, auth, "web", ndjson([{"_time": iso(t), "i": i} for t in times[i : i + 500]]))
    await post_events(client, auth, "other", ndjson([{"_time": iso(t)} for t in times[:300]]))
    now = MIDNIGHT + timedelta(days=2, hours=20, seconds=37, microseconds=5)  # retention's, below
    cutoff = now.replace(second=0, microsecond=0) - timedelta(days=1)
    gone = [t for t in times if t >= cutoff][:50]
    await post_events(client, auth, "gone", ndjson([{"_time": iso(t)} for t in gone]))
    # Late events: a later request with times inside minutes already counted, in no order.
    late = times[2000:]
    rng.shuffle(late)
    await post_events(client, auth, "web", ndjson([{"_time": iso(t), "late": True} for t in late]))
    await check_all(client, auth, times)

    # Retention with a cutoff that is not on a minute: whole minutes expire, events and counts together. The
    # first day's partition is dropped (every dataset in it expired), the second keeps what is after the cutoff.
    for name in ("web", "other"):
        await client.patch(f"/v1/datasets/{name}", headers=auth, json={"retention_days": 1})
    engine = make_engine(database_url, pool_size=1)
    try:
        report = await apply_retention(engine, now)
    finally:
        await engine.dispose()
    kept = [t for t in times if t >= cutoff]
    assert report.dropped == [f"events_{MIDNIGHT:%Y%m%d}"] and report.deleted_rows > 0
    await check_all(client, auth, kept)

    # Deleting a dataset takes its counts: a new dataset of that name starts from zero.
    r = await client.delete("/v1/datasets/gone", headers=auth)
    assert r.status_code in (200, 204), r.text
    sql = "SELECT d.name, sum(r.count) FROM event_rollups r JOIN datasets d ON d.id = r.dataset_id GROUP BY 1"
    async with db() as session:
        left = (await session.execute(text(sql))).all()
        orphans = (await session.execute(text("SELECT count(*) FROM event_rollups WHERE dataset_id NOT IN "
                                              "(SELECT id FROM datasets)"))).scalar_one()  # fmt: skip
    assert dict(left) == {"web": len(kept)} and orphans == 0
    await post_events(client, auth, "gone", ndjson([{"_time": iso(gone[0])}]))
    start, end = MIDNIGHT, MIDNIGHT + timedelta(days=2)
    r = await client.post(
        "/v1/query", headers=auth, json={"apl": "['gone'] | count", "start_time": iso(start), "end_time": iso(end)}
    )
    assert r.json()["rows"] == [[1]]


@pytest.mark.parametrize(
    "apl",
    [
        "['web'] | summarize count() by bin(_time, 90s)",  # not whole minutes: bins cut minutes in two
        "['web'] | summarize count() by bin(_time, 30s)",
        "['web'] | where status == 500 | summarize count() by bin(_time, 1m)",
        "['web'] | summarize count() by bin(_time, 1m), service",
        "['web'] | summarize count(), avg(duration) by bin(_time, 1m)",
        "['web'] | summarize count() by bin(_sysTime, 1m)",
        "['web'] | summarize count() by bin(_time, 1m) | where count_ > 1",
        "['web'] | take 10 | count",
    ],
)
def test_other_queries_read_the_events(apl: str) -> None:
    assert not served_by_rollup(apl, MIDNIGHT, MIDNIGHT + timedelta(days=1))


def test_a_sort_on_the_bin_and_a_take_are_served() -> None:
    apl = "['web'] | summarize n = count() by t = bin(_time, 5m) | sort by t desc | take 3"
    assert served_by_rollup(apl, MIDNIGHT, MIDNIGHT + timedelta(days=1))

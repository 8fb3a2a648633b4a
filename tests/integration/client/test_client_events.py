"""The client against the real app: ingest (one request and the batching ingester), query, export, datasets."""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime, timedelta

import pytest

from beacon_client import MAX_BYTES, AsyncClient, BeaconAPIError, IngestResult, QueryResult
from beacon_client.batching import BatchBuilder

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def events(n: int, start: int = 0) -> list[dict]:
    services = ("api", "web", "worker")
    return [
        {
            "_time": (T0 + timedelta(seconds=i)).isoformat(),
            "service": services[i % 3],
            "status": 500 if i % 10 == 0 else 200,
            "http": {"path": f"/p{i % 7}"},
            "n": i,
        }
        for i in range(start, start + n)
    ]


async def count(beacon: AsyncClient, dataset: str) -> int:
    result = await beacon.query(f"['{dataset}'] | summarize n = count()")
    return int(result.rows[0][0]) if result.rows else 0


async def test_one_request_ingest_reports_failed_events(beacon: AsyncClient):
    batch = [*events(3), "not an object", {"_time": "yesterday-ish", "n": 99}]
    result = await beacon.ingest("web", batch)
    assert isinstance(result, IngestResult)
    assert (result.dataset, result.ingested, result.failed) == ("web", 3, 2)
    assert sorted(f.index for f in result.failures) == [3, 4]
    assert result.processed_bytes > 0
    assert await count(beacon, "web") == 3


async def test_ingester_sends_10000_event_batches_the_app_accepts(beacon: AsyncClient):
    sent = events(20_001)
    sent[15_000]["_time"] = "not a time"
    async with beacon.ingester("web") as ing:
        await ing.extend(sent)
    totals = ing.totals
    assert (totals.batches, totals.events_sent) == (3, 20_001)
    assert (totals.ingested, totals.failed) == (20_000, 1)
    assert [f.index for f in totals.failures] == [15_000]  # its place among all the events added
    assert await count(beacon, "web") == 20_000


async def test_timestamp_options_reach_the_app(beacon: AsyncClient):
    rows = [{"when": "05/Jan/2026:10:00:00 +0100", "n": 1}]
    async with beacon.ingester("logs", timestamp_field="when", timestamp_format="02/Jan/2006:15:04:05 -0700") as ing:
        await ing.extend(rows)
    assert (ing.totals.ingested, ing.totals.failed) == (1, 0)
    result = await beacon.query("['logs'] | project _time, n")
    assert result.records()[0]["n"] == 1
    assert result.records()[0]["_time"].startswith("2026-01-05T09:00:00")


async def test_query_and_export(beacon: AsyncClient):
    await beacon.ingest("web", events(300))
    result = await beacon.query(
        "['web'] | where status >= 500 | summarize n = count() by service | sort by service asc",
        start_time=T0 - timedelta(days=1),
        end_time="now",
    )
    assert isinstance(result, QueryResult)
    assert [c.name for c in result.columns] == ["service", "n"]
    assert result.records() == [
        {"service": "api", "n": 10},
        {"service": "web", "n": 10},
        {"service": "worker", "n": 10},
    ]
    assert result.status.rows_returned == 3 and result.status.truncated is False

    capped = await beacon.query("['web'] | project n", take=5)
    assert len(capped.rows) == 5 and capped.status.truncated

    rows = [row async for row in beacon.export("['web'] | where n < 250 | project n")]
    assert sorted(r["n"] for r in rows) == list(range(250))

    with pytest.raises(BeaconAPIError) as caught:
        await beacon.query("['web'] | summarize count( by")
    assert caught.value.status == 400 and caught.value.code == "invalid_query"
    assert "line 1, column" in caught.value.message.lower() and caught.value.request_id
    with pytest.raises(BeaconAPIError) as caught:
        _ = [row async for row in beacon.export("['nowhere'] | take 1")]
    assert caught.value.code == "not_found"


async def test_datasets(beacon: AsyncClient):
    await beacon.ingest("web", events(10))
    await beacon.ingest("db", events(2))
    names = [d.name async for d in beacon.iterate(beacon.list_datasets, limit=1)]
    assert sorted(names) == ["db", "web"]
    info = await beacon.get_dataset("web")
    assert info.name == "web" and info.fields_count and info.fields_count >= 4
    assert info.min_time == T0 and info.max_time == T0 + timedelta(seconds=9)
    fields = {f.name: f.types async for f in beacon.iterate(beacon.list_fields, "web")}
    assert fields["http.path"] == ["string"] and fields["status"] == ["number"]
    changed = await beacon.update_dataset("web", description="front end", retention_days=30)
    assert (changed.description, changed.retention_days) == ("front end", 30)
    cleared = await beacon.update_dataset("web", retention_days=None)
    assert (cleared.description, cleared.retention_days) == ("front end", None)
    await beacon.delete_dataset("db")
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.get_dataset("db")
    assert caught.value.code == "not_found"


def test_a_full_10_mb_batch_is_accepted_over_http(served):
    """The size bound agrees with the app's body limit: a batch sealed at the bound is not a 413."""
    blobs = [{"n": n, "blob": base64.b64encode(os.urandom(1_500)).decode()} for n in range(7_000)]
    builder = BatchBuilder()
    batches = [b for b in map(builder.add, blobs) if b is not None]
    batches.append(builder.seal())
    assert len(batches) == 2 and MAX_BYTES - 10_000 < len(batches[0].body) <= MAX_BYTES
    with served.client() as beacon:
        for batch in batches:
            assert batch is not None
            assert beacon.ingest_raw("blobs", batch.body).ingested == len(batch.events)
        assert beacon.query("['blobs'] | summarize n = count()").rows == [[7_000]]

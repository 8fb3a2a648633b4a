"""The batching ingester's contract: batches on the wire, totals and failures surfaced, nothing dropped.

The local server decodes each batch and answers as the service does, counting events with `"bad": true`
as failed; the same behaviour against the real app is in tests/integration/client.
"""

from __future__ import annotations

import gzip
import json

import pytest
from werkzeug import Request, Response

from beacon_client import AsyncClient, BeaconAPIError, Client, IngestBatchError
from tests.client.conftest import server_error


class FakeIngest:
    def __init__(self, fail_batches: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self.batches: list[list[dict]] = []
        self.fail_batches = fail_batches
        self.requests: list[Request] = []

    def __call__(self, request: Request) -> Response:
        self.requests.append(request)
        assert request.headers["Content-Type"] == "application/x-ndjson"
        assert request.headers["Content-Encoding"] == "gzip"
        events = [json.loads(line) for line in gzip.decompress(request.get_data()).splitlines()]
        number = len(self.batches)
        if number in self.fail_batches:
            return server_error(500)(f"req_{len(self.requests):04x}")
        self.batches.append(events)
        bad = [i for i, e in enumerate(events) if e.get("bad")]
        body = {
            "object": "ingest_result",
            "dataset": "web",
            "ingested": len(events) - len(bad),
            "failed": len(bad),
            "failures": [{"index": i, "error": "bad event"} for i in bad[:10]],
            "processed_bytes": len(gzip.decompress(request.get_data())),
            "blocks_created": 1,
        }
        return Response(json.dumps(body), content_type="application/json")


def test_events_go_out_in_batches_of_10000_and_totals_add_up(httpserver):
    fake = FakeIngest()
    httpserver.expect_request("/v1/ingest/web", method="POST").respond_with_handler(fake)
    events = [{"n": n, "bad": n in (3, 10_004, 20_001)} for n in range(20_500)]
    with Client(httpserver.url_for(""), "t") as client:
        with client.ingester("web", timestamp_field="ts") as ing:
            ing.extend(events)
            assert ing.totals.batches == 2 and ing.pending == 500
        totals = ing.totals
    assert [len(b) for b in fake.batches] == [10_000, 10_000, 500]
    assert [e for b in fake.batches for e in b] == events
    assert fake.requests[0].args["timestamp-field"] == "ts"
    assert (totals.batches, totals.events_sent, totals.ingested, totals.failed) == (3, 20_500, 20_497, 3)
    assert [f.index for f in totals.failures] == [3, 10_004, 20_001]
    assert totals.bytes_sent == sum(len(r.get_data()) for r in fake.requests)


def test_a_batch_that_finally_fails_is_raised_with_its_events(httpserver):
    fake = FakeIngest(fail_batches={1})
    httpserver.expect_request("/v1/ingest/web").respond_with_handler(fake)
    events = [{"n": n} for n in range(25_000)]
    client = Client(httpserver.url_for(""), "t", sleep=lambda _s: None)
    ing = client.ingester("web")
    with pytest.raises(IngestBatchError) as caught:
        ing.extend(events)
    err = caught.value
    assert err.first_index == 10_000 and err.events == events[10_000:20_000]
    assert isinstance(err.cause, BeaconAPIError) and err.cause.status == 500 and err.cause.attempts == 6
    assert err.totals.ingested == 10_000 and err.totals.batches == 1
    # The caller can go on: the failed batch is out of the buffer, later events are batched again.
    fake.fail_batches = set()
    ing.extend(events[20_000:])
    ing.close()
    assert ing.totals.ingested == 15_000
    assert [len(b) for b in fake.batches] == [10_000, 5_000]
    client.close()


def test_leaving_the_block_with_an_error_still_sends_what_was_added(httpserver):
    fake = FakeIngest()
    httpserver.expect_request("/v1/ingest/web").respond_with_handler(fake)
    with Client(httpserver.url_for(""), "t") as client, pytest.raises(RuntimeError):
        with client.ingester("web") as ing:
            ing.add({"n": 1})
            raise RuntimeError("the producer broke")
    assert fake.batches == [[{"n": 1}]]


async def test_async_ingester_batches_and_surfaces_failed(httpserver):
    fake = FakeIngest()
    httpserver.expect_request("/v1/ingest/web").respond_with_handler(fake)

    async def produce():
        for n in range(10_001):
            yield {"n": n, "bad": n == 10_000}

    async with AsyncClient(httpserver.url_for(""), "t") as client:
        async with client.ingester("web") as ing:
            await ing.extend(produce())
    assert [len(b) for b in fake.batches] == [10_000, 1]
    assert (ing.totals.ingested, ing.totals.failed) == (10_000, 1)
    assert [f.index for f in ing.totals.failures] == [10_000]


async def test_async_batch_failure_is_raised(httpserver):
    fake = FakeIngest(fail_batches={0})
    httpserver.expect_request("/v1/ingest/web").respond_with_handler(fake)

    async def no_wait(_s: float) -> None:
        return None

    async with AsyncClient(httpserver.url_for(""), "t", sleep=no_wait) as client:
        ing = client.ingester("web")
        await ing.add({"n": 1})
        with pytest.raises(IngestBatchError) as caught:
            await ing.close()
    assert caught.value.events == [{"n": 1}] and caught.value.first_index == 0

"""Ingest limits and errors: sizes, counts, caps, bad bodies — and that a failed request stores nothing."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import Iterator

import orjson

from tests.helpers import assert_error
from tests.integration.ingest.util import JSON, NDJSON, count_rows, ndjson, post_events, stored

MB = 1024 * 1024


async def assert_nothing_stored(client, auth, db, dataset="web"):
    assert await count_rows(db, "events") == 0
    assert await count_rows(db, "dataset_fields") == 0
    assert_error(await client.get(f"/v1/datasets/{dataset}", headers=auth), 404, "not_found")


async def test_json_array_of_10000_is_fine_10001_is_refused(client, auth, db):
    ok = await post_events(client, auth, "web", orjson.dumps([{"i": i} for i in range(10_000)]), content_type=JSON)
    assert ok.json()["ingested"] == 10_000
    r = await post_events(client, auth, "other", orjson.dumps([{"i": i} for i in range(10_001)]), content_type=JSON)
    err = assert_error(r, 400, "too_many_events")
    assert "10,000" in err["message"]
    assert (await client.get("/v1/datasets/other", headers=auth)).status_code == 404


async def test_ndjson_takes_more_events_than_an_array(client, auth):
    r = await post_events(client, auth, "web", ndjson([{"i": i} for i in range(12_000)]), gzip=True)
    assert r.json()["ingested"] == 12_000
    assert r.json()["blocks_created"] >= 2  # written as it streamed in, in several COPY blocks


async def test_event_over_1mb_fails_alone(client, auth, db):
    big = {"blob": "x" * MB}
    for content_type, body in (
        (NDJSON, ndjson([{"a": 1}, big, {"a": 2}])),
        (JSON, orjson.dumps([{"a": 1}, big, {"a": 2}])),
    ):
        result = (await post_events(client, auth, "web", body, content_type=content_type)).json()
        assert (result["ingested"], result["failed"]) == (2, 1), content_type
        assert result["failures"][0]["index"] == 1 and "1 MB" in result["failures"][0]["error"]
    assert len(await stored(db)) == 4


async def test_body_over_10mb_refused_from_content_length(client, auth, db):
    body = b'{"a": 1}\n' * (10 * MB // 9 + 10)
    r = await post_events(client, auth, "web", body)
    err = assert_error(r, 413, "payload_too_large")
    assert f"{len(body):,} bytes" in err["message"] and "10 MB" in err["message"]
    await assert_nothing_stored(client, auth, db)


async def asgi_post(
    client, path: str, headers: dict[str, str], chunks: Iterator[bytes] | list[bytes]
) -> tuple[int, bytes]:
    """POST straight through ASGI, the body in chunks and without Content-Length (the test client cannot).

    Run on the test client's own event loop (its portal), where the app's engine lives. Given a list, the
    chunks the app did not read are left in it.
    """
    pending = chunks if isinstance(chunks, list) else list(chunks)
    result = await asyncio.to_thread(client.blocking_portal.call, _asgi_post, client.app, path, headers, pending)
    return result


async def _asgi_post(app, path: str, headers: dict[str, str], pending: list[bytes]) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver.local", 80),
    }

    async def receive():
        if pending:
            return {"type": "http.request", "body": pending.pop(0), "more_body": bool(pending)}
        return {"type": "http.disconnect"}

    status = 0
    body = bytearray()

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body.extend(message.get("body", b""))

    await app(scope, receive, send)
    return status, bytes(body)


async def test_streamed_body_over_10mb_without_length(client, auth, db):
    line = b'{"a": "' + b"x" * 240 + b'"}\n'  # 11 MB in fewer lines than the NDJSON line limit
    chunks = (line * (MB // len(line) + 1) for _ in range(11))
    status, body = await asgi_post(client, "/v1/ingest/web", {**auth, "content-type": NDJSON}, chunks)
    err = orjson.loads(body)["error"]
    assert status == 413 and err["code"] == "payload_too_large"
    assert "10 MB" in err["message"]
    await assert_nothing_stored(client, auth, db)


async def test_streamed_body_within_limits(client, auth, db):
    chunks = iter([b'{"a": 1}\n{"a"', b": 2}\n", b'{"a": 3}'])
    status, body = await asgi_post(client, "/v1/ingest/web", {**auth, "content-type": NDJSON}, chunks)
    assert status == 200 and orjson.loads(body)["ingested"] == 3
    assert len(await stored(db)) == 3


def gzip_of(megabytes: int, chunk: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = chunk * (MB // len(chunk))
    return b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()


async def test_gzip_bomb_stops_at_100mb(client, auth, db):
    bomb = gzip_of(1024, b" " * 4095 + b"\n")  # 1 GB of blank lines (spaces) in about 1 MB
    assert len(bomb) < 2 * MB
    r = await post_events(client, auth, "web", bomb, headers={"content-encoding": "gzip"})
    err = assert_error(r, 413, "payload_too_large")
    assert "100 MB" in err["message"]
    await assert_nothing_stored(client, auth, db)


async def test_failing_midway_stores_nothing(app_client, auth, db):
    """Rows already COPYed (a full block) are rolled back when the decompressed cap hits later."""

    good = ndjson([{"i": i, "pad": "p" * 50} for i in range(6000)])  # more than one COPY block
    cap = len(good) + MB
    body = good + b" " * (2 * MB)
    async with app_client(ingest_max_decompressed_bytes=cap) as client:
        ok = await post_events(client, auth, "web", good, gzip=True)
        assert ok.json()["ingested"] == 6000 and ok.json()["blocks_created"] == 2
        await client.delete("/v1/datasets/web", headers=auth)
        r = await post_events(client, auth, "web", body, gzip=True)
        assert_error(r, 413, "payload_too_large")
        await assert_nothing_stored(client, auth, db)


async def test_truncated_gzip_midway_stores_nothing(client, auth, db):
    data = gzip.compress(ndjson([{"i": i} for i in range(8000)]))
    r = await post_events(client, auth, "web", data[: len(data) - 20], headers={"content-encoding": "gzip"})
    assert_error(r, 400, "invalid_body")
    await assert_nothing_stored(client, auth, db)


async def test_not_gzip_at_all(client, auth, db):
    r = await post_events(client, auth, "web", ndjson([{"a": 1}]), headers={"content-encoding": "gzip"})
    assert_error(r, 400, "invalid_body")
    await assert_nothing_stored(client, auth, db)


async def test_json_array_that_does_not_parse(client, auth, db):
    for body in (b'[{"a": 1}, {"a": 2}', b"not json", b"", b'[{"a": 1}] trailing'):
        assert_error(await post_events(client, auth, "web", body, content_type=JSON), 400, "invalid_json")
    assert_error(await post_events(client, auth, "web", b"42", content_type=JSON), 400, "invalid_json")
    await assert_nothing_stored(client, auth, db)


async def test_other_media_types_and_encodings(client, auth, db):
    r = await post_events(client, auth, "web", b"a,b\n1,2\n", content_type="text/csv")
    assert_error(r, 415, "unsupported_media_type")
    r = await post_events(client, auth, "web", ndjson([{"a": 1}]), headers={"content-encoding": "br"})
    assert_error(r, 415, "unsupported_media_type")
    await assert_nothing_stored(client, auth, db)


async def test_empty_ndjson_body(client, auth):
    result = (await post_events(client, auth, "web", b"")).json()
    assert (result["ingested"], result["failed"], result["processed_bytes"]) == (0, 0, 0)

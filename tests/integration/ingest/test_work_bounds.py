"""A request's work is bounded before it is done: small gzip bodies that inflate to millions of lines, and
JSON arrays parsed piece by piece as they inflate rather than held whole."""

from __future__ import annotations

import gzip
import time
import zlib

import orjson
from sqlalchemy import text

from tests.helpers import assert_error
from tests.integration.ingest.test_limits import asgi_post, assert_nothing_stored
from tests.integration.ingest.util import JSON, NDJSON, ndjson, post_events, stored

MB = 1024 * 1024


def gzip_stream(total: int, unit: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = unit * (MB // len(unit))
    return b"".join(compressor.compress(block) for _ in range(total // len(block))) + compressor.flush()


async def events_table_bytes(db) -> int:
    async with db() as s:
        sql = (
            "SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits "
            "WHERE inhparent = 'events'::regclass"
        )
        return int((await s.execute(text(sql))).scalar_one())


async def test_a_gzip_of_newlines_is_refused_at_once(client, auth, db):
    bomb = gzip_stream(99 * MB, b"\n")  # about 100 KB
    assert len(bomb) < 200_000
    started = time.monotonic()
    r = await post_events(client, auth, "web", bomb, headers={"content-encoding": "gzip"})
    err = assert_error(r, 400, "too_many_events")
    assert "100,000 lines" in err["message"] and "nothing was stored" in err["message"]
    assert time.monotonic() - started < 30  # was about 2 minutes of CPU; now the first 256 KB decide
    await assert_nothing_stored(client, auth, db)


async def test_a_gzip_of_tiny_events_stops_at_the_line_limit(client, auth, db):
    body = gzip_stream(12 * MB, b'{"a":1}\n')  # 1.5 million events in about 20 KB
    r = await post_events(client, auth, "web", body, headers={"content-encoding": "gzip"})
    assert_error(r, 400, "too_many_events")
    await assert_nothing_stored(client, auth, db)
    # At most the lines up to the limit were written before the refusal (and rolled back): no dead rows of note.
    assert await events_table_bytes(db) < 24 * MB


async def test_the_line_limit_counts_blank_lines(client, auth, db):
    body = b"\n" * 99_999 + b'{"a": 1}\n'  # 100,000 lines
    r = await post_events(client, auth, "web", body)
    assert r.status_code == 200 and r.json()["ingested"] == 1
    r = await post_events(client, auth, "other", b"\n" + body)
    assert_error(r, 400, "too_many_events")
    r = await post_events(client, auth, "other", body + b'{"a": 2}')  # the last line, without its newline
    assert_error(r, 400, "too_many_events")
    assert len(await stored(db)) == 1


async def test_a_json_array_is_written_as_it_streams_in(client, auth, db):
    """Rows go to PostgreSQL in several COPY blocks while the array is read, as for NDJSON: the body is never
    held whole (it was: one block, at the end)."""
    events = [{"i": i, "pad": "p" * 5000} for i in range(2_000)]  # 10 MB
    r = await post_events(client, auth, "web", orjson.dumps(events), content_type=JSON, gzip=True)
    assert r.status_code == 200, r.text
    assert r.json()["ingested"] == 2_000 and r.json()["blocks_created"] >= 2
    assert sorted(row["data"]["i"] for row in await stored(db)) == list(range(2_000))


# The body as sent (at most 10 MB) is read whole before the request's transaction begins, so that no database
# connection waits on a client (app/request_bodies.py); the limits below bound the parsing of what it holds.


async def test_a_json_array_over_the_event_limit_is_refused(client, auth, db):
    first = b"[" + b",".join([b'{"a":1}'] * 10_001)
    chunks = [first, *(b"," + b",".join([b'{"a":1}'] * 10_000) for _ in range(50)), b"]"]
    status, body = await asgi_post(client, "/v1/ingest/web", {**auth, "content-type": JSON}, chunks)
    assert status == 400 and orjson.loads(body)["error"]["code"] == "too_many_events"
    await assert_nothing_stored(client, auth, db)


async def test_a_json_array_element_past_the_bound_is_refused(client, auth, db):
    gz = gzip.compress(b'[{"a": 1}, {"big": "' + b"x" * (60 * MB) + b'"}]')
    chunks = [gz[i : i + 2048] for i in range(0, len(gz), 2048)]
    headers = {**auth, "content-type": JSON, "content-encoding": "gzip"}
    status, body = await asgi_post(client, "/v1/ingest/web", headers, chunks)
    err = orjson.loads(body)["error"]
    assert status == 413 and err["code"] == "payload_too_large", err
    assert "element of the JSON array" in err["message"] and "10 MB" in err["message"]
    await assert_nothing_stored(client, auth, db)


async def test_whitespace_padding_in_a_json_array_is_not_held(client, auth, db):
    padded = b"[" + b" " * (20 * MB) + b'{"a": 1},' + b"\n" * (20 * MB) + b'{"a": 2}' + b"\t" * (20 * MB) + b"]"
    r = await post_events(client, auth, "web", padded, content_type=JSON, gzip=True)
    assert r.status_code == 200 and r.json()["ingested"] == 2, r.text


async def test_ndjson_and_a_json_array_store_the_same_rows(client, auth, db):
    events = [{"i": i, "http": {"status": i % 3}, "tags": ["a", {"b": i}], "s": "},{" * (i % 4)} for i in range(300)]
    events += [{"i": 300, "_time": "yesterday"}, {"i": 301, "k\u0000": 1}, [1], "text"]
    a = (await post_events(client, auth, "a", ndjson(events))).json()
    b = (await post_events(client, auth, "b", orjson.dumps(events), content_type=JSON)).json()
    assert (a["ingested"], a["failed"], a["failures"]) == (b["ingested"], b["failed"], b["failures"])
    assert a["failed"] == 4
    rows_a = sorted(orjson.dumps(r["data"]) for r in await stored(db, "a"))
    rows_b = sorted(orjson.dumps(r["data"]) for r in await stored(db, "b"))
    assert rows_a == rows_b and len(rows_a) == 300


async def test_ndjson_stream_of_one_chunk_per_line(client, auth, db):
    chunks = [b'{"i": %d}\n' % i for i in range(50)]
    status, body = await asgi_post(client, "/v1/ingest/web", {**auth, "content-type": NDJSON}, iter(chunks))
    assert status == 200 and orjson.loads(body)["ingested"] == 50

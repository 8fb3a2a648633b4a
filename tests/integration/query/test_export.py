"""POST /v1/export: NDJSON of every row, gzip when asked, streamed from a server-side cursor."""

from __future__ import annotations

import asyncio
import gzip
from datetime import UTC, datetime

import asyncpg
import httpx
import orjson
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.query.service import EXPORT_BATCH, accepts_gzip
from tests.helpers import assert_error
from tests.integration.query.conftest import MANY
from tests.integration.query.helpers import fetch
from tests.integration.query.loader import load_generated

Client = AsyncTestClient[Litestar]


def lines(body: bytes) -> list[dict[str, object]]:
    assert body.endswith(b"\n") or body == b""
    return [orjson.loads(line) for line in body.splitlines()]


@pytest.mark.usefixtures("web")
async def test_events_as_ndjson(client: Client, auth: dict[str, str]) -> None:
    resp = await client.post(
        "/v1/export",
        json={"apl": "['web'] | where service == 'api' and status >= 500 | sort by _time asc"},
        headers={**auth, "Accept-Encoding": "identity"},
    )
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/x-ndjson")
    assert "content-encoding" not in resp.headers
    assert resp.headers["x-ratelimit-limit"] == "1000"  # counted in the query group
    assert lines(resp.content) == [
        {
            "_time": "2025-03-01T10:00:30.000Z",
            "service": "api",
            "status": 500,
            "duration_ms": 250.0,
            "http.path": "/api/orders",
            "method": "POST",
            "msg": "order failed: Timeout",
        },
        {
            "_time": "2025-03-01T10:01:10.000Z",
            "service": "api",
            "status": 503,
            "duration_ms": 900,
            "http.path": "/api/orders",
            "method": "POST",
            "msg": "upstream timeout",
        },
    ]


SHAPES: list[tuple[str, list[object]]] = [
        (
            "['web'] | summarize n = count() by service | sort by service asc",
            [{"service": "api", "n": 4}, {"service": "web", "n": 2}, {"service": "worker", "n": 2}],
        ),
        (
            "['web'] | where status == 404 | extend slow = duration_ms > 100, at = bin(_time, 1h) | project-away msg",
            [
                {
                    "_time": "2025-03-01T10:02:59.250Z",
                    "service": "web",
                    "status": 404,
                    "duration_ms": 3,
                    "http.path": "/missing",
                    "method": "GET",
                    "slow": False,
                    "at": "2025-03-01T10:00:00.000Z",
                }
            ],
        ),
        ("['web'] | where status == 404 | project-away _time, msg, method, ['http.path'], duration_ms",
         [{"service": "web", "status": 404}]),
        ("['web'] | where isnull(status) | project tags, d = _time - datetime(2025-03-02)",
         [{"tags": ["a", "b"], "d": "09:30:00"}]),
        ("['web'] | where service == 'none'", []),
        # Sorted: the events come as JSONB rather than text (PostgreSQL would cast every row it sorts).
        ("['web'] | where service == 'web' | sort by _time desc", [
            {"_time": "2025-03-01T10:02:59.250Z", "service": "web", "status": 404, "duration_ms": 3,
             "http.path": "/missing", "method": "GET", "msg": "not found"},
            {"_time": "2025-03-01T10:02:00.000Z", "service": "web", "status": 200, "duration_ms": 5,
             "http.path": "/index.html", "method": "GET", "msg": "ok"},
        ]),
        ("['web'] | where service == 'web' | top 1 by duration_ms | extend twice = status * 2 | project msg, twice",
         [{"msg": "ok", "twice": 400}]),
        ("['web'] | count", [{"Count": 8}]),
]  # fmt: skip


@pytest.mark.usefixtures("web")
async def test_every_result_shape(client: Client, auth: dict[str, str]) -> None:
    for apl, expected in SHAPES:
        resp = await client.post("/v1/export", json={"apl": apl}, headers=auth)
        assert resp.status_code == 200, resp.text
        assert lines(resp.content) == expected, apl


@pytest.mark.usefixtures("many")
async def test_no_cap_unless_the_query_has_one(client: Client, auth: dict[str, str]) -> None:
    resp = await client.post("/v1/export", json={"apl": "['many']"}, headers=auth)
    got = lines(resp.content)
    assert len(got) == MANY > 1000  # more than /v1/query's default cap
    assert sorted(int(e["n"]) for e in got) == list(range(MANY))  # type: ignore[call-overload]
    resp = await client.post("/v1/export", json={"apl": "['many'] | sort by n desc | take 7 | project n"}, headers=auth)
    assert lines(resp.content) == [{"n": n} for n in range(1204, 1197, -1)]
    resp = await client.post("/v1/export", json={"apl": "['many']", "start_time": "2025-04-01T00:10:00Z"}, headers=auth)
    assert len(lines(resp.content)) == MANY - 600


@pytest.mark.usefixtures("many")
async def test_gzip_when_asked(client: Client, auth: dict[str, str]) -> None:
    body = {"apl": "['many'] | sort by n asc"}
    plain = await client.post("/v1/export", json=body, headers={**auth, "Accept-Encoding": "identity"})
    async with client.stream("POST", "/v1/export", json=body, headers={**auth, "Accept-Encoding": "gzip"}) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-encoding"] == "gzip"
        assert resp.headers["vary"] == "Accept-Encoding"
        raw = b"".join([chunk async for chunk in resp.aiter_raw()])
    assert gzip.decompress(raw) == plain.content
    assert len(raw) < len(plain.content) / 3


@pytest.mark.parametrize(
    ("header", "wanted"),
    [
        ("gzip", True),
        ("GZIP", True),
        ("br, gzip;q=0.5", True),
        ("*", True),
        ("x-gzip", True),
        ("gzip;q=0", False),
        ("gzip; q=0.0, br", False),
        ("identity", False),
        ("", False),
        ("deflate, br", False),
    ],
)
def test_accept_encoding(header: str, wanted: bool) -> None:
    assert accepts_gzip(header) is wanted


@pytest.mark.usefixtures("web")
async def test_errors_come_before_the_stream(client: Client, auth: dict[str, str]) -> None:
    resp = await client.post("/v1/export", json={"apl": "['web'] | where"}, headers=auth)
    err = assert_error(resp, 400, "invalid_query", param="apl")
    assert err["message"].startswith("Line 1, column 16:")
    resp = await client.post("/v1/export", json={"apl": "['web'] | where msg matches regex '('"}, headers=auth)
    assert_error(resp, 400, "invalid_query")
    resp = await client.post("/v1/export", json={"apl": "['web']", "take": 5}, headers=auth)
    assert_error(resp, 400, "invalid_field", param="take")  # export has no cap of its own


# ---- streaming through a real server ------------------------------------------------------------------


async def _beacon_backends(database_url: str) -> list[asyncpg.Record]:
    return await fetch(
        database_url,
        "SELECT state, query FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'beacon-queries' AND query LIKE '%FROM events%'",
    )


async def test_export_streams_from_a_cursor_while_the_client_reads(
    served: str, auth: dict[str, str], database_url: str
) -> None:
    total = 100_000  # about 9 MB of NDJSON: more than the socket buffers hold
    await load_generated(database_url, "big", total, datetime(2025, 6, 1, tzinfo=UTC), step_ms=10)
    async with (
        httpx.AsyncClient(base_url=served, headers={**auth, "Accept-Encoding": "identity"}, timeout=60) as http,
        http.stream("POST", "/v1/export", json={"apl": "['big']"}) as resp,
    ):
        assert resp.status_code == 200
        assert "content-length" not in resp.headers  # chunked: the size is not known in advance
        chunks = resp.aiter_bytes()
        first = await anext(chunks)
        assert 0 < first.count(b"\n") < total
        # The client has read one chunk; the server is still inside the transaction holding the cursor.
        await asyncio.sleep(0.2)
        mid_stream = await _beacon_backends(database_url)
        assert any(r["state"] in ("idle in transaction", "active") for r in mid_stream), mid_stream
        count = first.count(b"\n")
        pieces = 1
        last = first
        async for chunk in chunks:
            count += chunk.count(b"\n")
            pieces += 1
            last = chunk
        assert count == total
        assert pieces > total // EXPORT_BATCH // 2  # arrived in many pieces, not one body
        assert orjson.loads(last.splitlines()[-1])["msg"].startswith("event ")
    await asyncio.sleep(0.1)
    after = await _beacon_backends(database_url)
    assert all(r["state"] == "idle" for r in after), after  # the transaction ended with the stream


async def test_a_client_that_goes_away_ends_the_transaction(
    served: str, auth: dict[str, str], database_url: str
) -> None:
    await load_generated(database_url, "big", 100_000, datetime(2025, 6, 1, tzinfo=UTC), step_ms=10)
    async with (
        httpx.AsyncClient(base_url=served, headers={**auth, "Accept-Encoding": "identity"}, timeout=60) as http,
        http.stream("POST", "/v1/export", json={"apl": "['big']"}) as resp,
    ):
        await anext(resp.aiter_bytes())
    # closed after one chunk: the server notices, closes the generator and rolls back
    for _ in range(100):
        states = [r["state"] for r in await _beacon_backends(database_url)]
        if all(s == "idle" for s in states):
            break
        await asyncio.sleep(0.1)
    assert all(s == "idle" for s in states), states

"""Benchmark: POST /v1/query end to end against the best hand-written SQL, and POST /v1/export throughput.

    .venv/bin/pip install -e '.[bench]'    # aiohttp, the HTTP client timed below
    .venv/bin/python bench/query.py [--events 1000000] [--runs 15] [--seconds 4] [--server-url postgresql://...]

Loads N events (COPY, 72 hours, one dataset) into a fresh database on the given PostgreSQL server, starts a
real `beacon serve` subprocess on it, and for each of five typical queries times our endpoint (HTTP request
to parsed JSON rows in the client) against the same answer from hand-written SQL sent over asyncpg (to
decoded rows), interleaved, at least --runs times and until --seconds have passed. Prints the medians, each
ratio and the median ratio. Then exports every event as NDJSON and reports rows/s and the server process's
peak RSS (from /proc).

The HTTP client is aiohttp, whose protocol parser is compiled as asyncpg's is: the comparison is then of the
service against the database, not of two clients. httpx (pure-Python HTTP/1.1) is timed too and shown beside:
for a 127 KB answer it alone costs about 1.1 ms more than aiohttp (both against a server that sends a
constant body).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import asyncpg
import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.migrate import upgrade  # noqa: E402
from app.settings import asyncpg_dsn  # noqa: E402

DATASET = "bench"
SERVICES = ["api", "web", "checkout", "search", "auth", "billing", "worker", "gateway"]
PATHS = [f"/api/{name}/{i}" for name in ("users", "orders", "items", "carts", "payments") for i in range(4)]
STATUSES = [200] * 80 + [201] * 5 + [304] * 5 + [404] * 5 + [500] * 3 + [503] * 2
REGIONS = ["eu-west", "eu-central", "us-east", "us-west", "ap-south"]
WORDS = "alpha beta gamma delta timeout retry cache miss hit user order payment ok failed slow".split()


def _with_db(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def make_event(rng: random.Random, t: datetime) -> tuple[datetime, dict[str, Any]]:
    return t, {
        "service": rng.choice(SERVICES),
        "status": rng.choice(STATUSES),
        "duration_ms": round(rng.lognormvariate(3.5, 1.0), 3),
        "http.path": rng.choice(PATHS),
        "http.method": rng.choice(("GET", "GET", "GET", "POST", "PUT", "DELETE")),
        "region": rng.choice(REGIONS),
        "user_id": rng.randrange(100_000),
        "msg": " ".join(rng.choice(WORDS) for _ in range(6)),
    }


async def recount(conn: asyncpg.Connection, dataset_id: int) -> None:
    """The dataset's per-minute counts (`event_rollups`), as ingest would have written them for these events."""
    started = time.perf_counter()
    async with conn.transaction():
        await conn.execute("DELETE FROM event_rollups WHERE dataset_id = $1", dataset_id)
        await conn.execute(
            "INSERT INTO event_rollups (dataset_id, minute, count) SELECT dataset_id,"
            " date_bin('1 minute', time, TIMESTAMPTZ '1970-01-01 00:00:00+00'), count(*)"
            " FROM events WHERE dataset_id = $1 GROUP BY 1, 2",
            dataset_id,
        )
    print(f"counted them per minute into event_rollups in {time.perf_counter() - started:.1f} s")


async def load(url: str, events: int, end: datetime, hours: float = 72) -> int:
    """COPY `events` events spread over the `hours` hours before `end`; returns the dataset id."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        dataset_id = await conn.fetchval("INSERT INTO datasets (name) VALUES ($1) RETURNING id", DATASET)
        start = end - timedelta(hours=hours)
        day = datetime(start.year, start.month, start.day, tzinfo=UTC)
        while day < end:
            nxt = day + timedelta(days=1)
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS events_p{day:%Y%m%d} PARTITION OF events "
                f"FOR VALUES FROM ('{day.isoformat()}') TO ('{nxt.isoformat()}')"
            )
            day = nxt
        rng = random.Random(42)
        step = timedelta(hours=hours) / events
        batch: list[tuple[Any, ...]] = []
        started = time.perf_counter()
        for i in range(events):
            t, data = make_event(rng, start + step * i)
            batch.append((dataset_id, t, t, orjson.dumps(data).decode()))
            if len(batch) == 50_000:
                await conn.copy_records_to_table(
                    "events", records=batch, columns=["dataset_id", "time", "sys_time", "data"]
                )
                batch = []
        if batch:
            await conn.copy_records_to_table(
                "events", records=batch, columns=["dataset_id", "time", "sys_time", "data"]
            )
        print(f"loaded {events:,} events in {time.perf_counter() - started:.1f} s (COPY)")
        await recount(conn, int(dataset_id))
        await conn.execute("VACUUM ANALYZE events")
        await conn.execute("VACUUM ANALYZE event_rollups")
        return int(dataset_id)
    finally:
        await conn.close()


async def reusable(url: str, events: int, hours: float = 72) -> tuple[int, datetime] | None:
    """The dataset id and end time of an earlier load of exactly `events` events, if there is one."""
    try:
        conn = await asyncpg.connect(asyncpg_dsn(url))
    except (OSError, asyncpg.PostgresError):
        return None
    try:
        row = await conn.fetchrow(
            "SELECT d.id, count(e.*), max(e.time) FROM datasets d JOIN events e ON e.dataset_id = d.id "
            "WHERE d.name = $1 GROUP BY d.id",
            DATASET,
        )
    except asyncpg.PostgresError:
        return None
    finally:
        await conn.close()
    if row is None or row[1] != events:
        return None
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        if await conn.fetchval("SELECT sum(count) FROM event_rollups WHERE dataset_id = $1", row[0]) != events:
            await recount(conn, int(row[0]))  # loaded before the rollup existed
    finally:
        await conn.close()
    step = timedelta(hours=hours) / events
    return int(row[0]), row[2] + step


async def events_database(
    server_url: str, database: str, events: int, *, reuse: bool, hours: float = 72
) -> tuple[str, int, datetime]:
    """(database URL, dataset id, end time) of `events` events over `hours` hours: the ones an earlier run left
    in `database` when `reuse` asks for them and they match, else a fresh database loaded by COPY."""
    url = _with_db(server_url, database)
    reused = await reusable(url, events, hours=hours) if reuse else None
    if reused is not None:
        print(f"reusing {events:,} events in {database}")
        return url, *reused
    admin = await asyncpg.connect(asyncpg_dsn(server_url))
    await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{database}"')
    await admin.close()
    await asyncio.to_thread(upgrade, url)
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    return url, await load(url, events, end, hours=hours), end


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class Server:
    def __init__(self, url: str, workdir: Path) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "BEACON_DATABASE_URL": url,
            "BEACON_DATA_DIR": str(workdir),
            "BEACON_SECRET_KEY": "bench-secret",
            "BEACON_RUN_SCHEDULER": "false",
            "BEACON_LOG_LEVEL": "warning",
            "BEACON_RATE_LIMIT_QUERY": "1000000",
        }
        beacon = str(Path(sys.executable).with_name("beacon"))
        out = subprocess.run(
            [beacon, "tokens", "create", "--name", "bench", "--scope", "query"],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        self.token = out.stdout.strip().splitlines()[-1]
        self.proc = subprocess.Popen(
            [beacon, "serve", "--port", str(self.port), "--workers", "1"], env=self.env, stdout=subprocess.DEVNULL
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("beacon serve did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def queries(start: datetime, end: datetime, now: datetime) -> list[dict[str, Any]]:
    """The five typical queries: our request body and the hand-written SQL for the same answer."""
    mid = start + (end - start) / 2
    lo, hi = mid - timedelta(hours=12), mid + timedelta(hours=12)
    return [
        {
            "name": "count over a time range (24 h)",
            "body": {"apl": f"['{DATASET}'] | count", "start_time": lo.isoformat(), "end_time": hi.isoformat()},
            "sql": "SELECT count(*) FROM events WHERE dataset_id = $1 AND time >= $2 AND time < $3",
            "args": [lo, hi],
        },
        {
            "name": "filter on a string field (newest 1,000 events)",
            "body": {"apl": f"['{DATASET}'] | where ['http.path'] == \"/api/orders/1\""},
            # `data`, not `data::text`: asyncpg hands JSONB over as text anyway, and a cast in the select list is
            # computed for every row sorted, not only for those returned (see the top 10 below).
            "sql": "SELECT time, data FROM events WHERE dataset_id = $1 AND time < $2 "
            "AND data->>'http.path' = '/api/orders/1' ORDER BY time DESC LIMIT 1000",
            "args": [now],
            "decode": True,
        },
        {
            "name": "summarize count() by bin(_time, 1m)",
            "body": {"apl": f"['{DATASET}'] | summarize count() by bin(_time, 1m) | sort by _time asc", "take": 10000},
            # date_bin, not date_trunc: date_trunc on timestamptz converts through the session time zone and is
            # the slower of the two, and the baseline should be the best SQL.
            "sql": "SELECT date_bin('1 minute', time, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS m, count(*) "
            "FROM events WHERE dataset_id = $1 AND time < $2 GROUP BY m ORDER BY m",
            "args": [now],
        },
        {
            "name": "summarize avg(duration_ms) by service where duration_ms > 100",
            "body": {"apl": f"['{DATASET}'] | where duration_ms > 100 | summarize avg(duration_ms) by service"},
            "sql": "SELECT data->>'service', avg((data->>'duration_ms')::float8) FROM events WHERE dataset_id = $1 "
            "AND time < $2 AND (data->>'duration_ms')::float8 > 100 GROUP BY 1",
            "args": [now],
        },
        {
            "name": "top 10 by duration_ms",
            "body": {"apl": f"['{DATASET}'] | top 10 by duration_ms"},
            "sql": "SELECT time, data FROM events WHERE dataset_id = $1 AND time < $2 "
            "ORDER BY (data->>'duration_ms')::float8 DESC LIMIT 10",
            "args": [now],
            "decode": True,
        },
    ]


async def time_ours(client: aiohttp.ClientSession, body: dict[str, Any]) -> tuple[float, int]:
    started = time.perf_counter()
    async with client.post("/v1/query", data=orjson.dumps(body), headers=JSON) as resp:
        content = await resp.read()
    rows = orjson.loads(content)["rows"] if resp.status == 200 else None
    elapsed = time.perf_counter() - started
    if rows is None:
        raise RuntimeError(f"{resp.status}: {content.decode()}")
    return elapsed, len(rows)


async def time_httpx(client: httpx.AsyncClient, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    resp = await client.post("/v1/query", json=body)
    orjson.loads(resp.content)["rows"]
    return time.perf_counter() - started


JSON = {"Content-Type": "application/json"}


async def time_sql(conn: asyncpg.Connection, q: dict[str, Any], dataset_id: int) -> tuple[float, int]:
    started = time.perf_counter()
    records = await conn.fetch(q["sql"], dataset_id, *q["args"])
    if q.get("decode"):
        rows: list[Any] = [(r[0], orjson.loads(r[1])) for r in records]
    else:
        rows = [tuple(r) for r in records]
    return time.perf_counter() - started, len(rows)


async def export(server: Server, gzip: bool) -> dict[str, float]:
    pid = server.proc.pid
    before = rss_kb(pid, "VmRSS")
    try:  # reset the peak-RSS mark so that VmHWM is the peak during this export
        await asyncio.to_thread(Path(f"/proc/{pid}/clear_refs").write_text, "5")
        reset = True
    except OSError:
        reset = False
    peak_sampled = before
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_sampled
        while not stop.is_set():
            peak_sampled = max(peak_sampled, rss_kb(pid, "VmRSS"))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    headers = {"Authorization": f"Bearer {server.token}", "Accept-Encoding": "gzip" if gzip else "identity"}
    lines = 0
    wire = 0
    started = time.perf_counter()
    async with (
        httpx.AsyncClient(base_url=server.base, headers=headers, timeout=600) as client,
        client.stream("POST", "/v1/export", json={"apl": f"['{DATASET}']"}) as resp,
    ):
        resp.raise_for_status()
        async for chunk in resp.aiter_bytes():  # decompressed when gzip
            lines += chunk.count(b"\n")
        wire = resp.num_bytes_downloaded
    elapsed = time.perf_counter() - started
    stop.set()
    sampler.join()
    peak = rss_kb(pid, "VmHWM") if reset else peak_sampled
    return {
        "rows": lines,
        "seconds": elapsed,
        "rows_per_s": lines / elapsed,
        "rss_before_mb": before / 1024,
        "rss_peak_mb": max(peak, peak_sampled) / 1024,
        "wire_mb": wire / 1e6,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=15, help="at least this many runs of each query")
    parser.add_argument("--seconds", type=float, default=4, help="and more runs until this long on each query")
    parser.add_argument(
        "--server-url",
        default=os.environ.get("BEACON_BENCH_SERVER_URL", "postgresql://postgres@127.0.0.1:5432/postgres"),
    )
    parser.add_argument("--database", default="beacon_h5_bench")
    parser.add_argument("--reuse", action="store_true", help="keep the events of a previous run (same --events)")
    args = parser.parse_args()

    url, dataset_id, end = await events_database(args.server_url, args.database, args.events, reuse=args.reuse)

    with tempfile.TemporaryDirectory() as workdir:
        server = Server(url, Path(workdir))
        try:
            conn = await asyncpg.connect(asyncpg_dsn(url))
            results = []
            auth = {"Authorization": f"Bearer {server.token}"}
            async with (
                aiohttp.ClientSession(server.base, headers=auth, timeout=aiohttp.ClientTimeout(120)) as client,
                httpx.AsyncClient(base_url=server.base, headers=auth, timeout=120) as slow_client,
            ):
                for q in queries(end - timedelta(hours=72), end, datetime.now(UTC)):
                    ours_n = (await time_ours(client, q["body"]))[1]  # warm-up (and the row counts agree)
                    sql_n = (await time_sql(conn, q, dataset_id))[1]
                    await time_httpx(slow_client, q["body"])
                    if ours_n != sql_n:
                        raise RuntimeError(f"{q['name']}: {ours_n} rows from the API, {sql_n} from SQL")
                    ours, base, via_httpx = [], [], []
                    started = time.perf_counter()
                    # Interleaved, so that load from others hits both alike; more runs of the quick queries.
                    while len(ours) < args.runs or time.perf_counter() - started < args.seconds:
                        ours.append((await time_ours(client, q["body"]))[0])
                        base.append((await time_sql(conn, q, dataset_id))[0])
                        via_httpx.append(await time_httpx(slow_client, q["body"]))
                    o, b, h = (statistics.median(x) for x in (ours, base, via_httpx))
                    results.append((q["name"], ours_n, len(ours), o, b, o / b, h, h / b))
            await conn.close()
            print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; medians of interleaved runs")
            row = "{:64} {:>6} {:>5} {:>8} {:>8} {:>6}  {:>8} {:>6}"
            print(row.format("query", "rows", "runs", "ours ms", "SQL ms", "ratio", "httpx ms", "ratio"))
            for name, n, runs, o, b, r, h, hr in results:
                ms = (f"{o * 1000:.1f}", f"{b * 1000:.1f}", f"{r:.2f}", f"{h * 1000:.1f}", f"{hr:.2f}")
                print(row.format(name, n, runs, *ms))
            ratios = [r[5] for r in results]
            median = statistics.median(ratios)
            print(f"median ratio {median:.2f}, max ratio {max(ratios):.2f} (targets: <= 1.2, each <= 1.5)")
            for gzip in (False, True):
                e = await export(server, gzip)
                print(
                    f"\nexport{' (gzip)' if gzip else ''}: {e['rows']:,.0f} rows in {e['seconds']:.1f} s = "
                    f"{e['rows_per_s']:,.0f} rows/s; {e['wire_mb']:.0f} MB on the wire; server RSS "
                    f"{e['rss_before_mb']:.0f} MB before, peak {e['rss_peak_mb']:.0f} MB during"
                )
        finally:
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())

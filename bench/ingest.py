"""Ingest benchmark: the real service against raw COPY of the same rows.

    .venv/bin/python bench/ingest.py [--events 200000] [--batch 10000] [--clients 4] [--workers 1,2]

1. Creates a fresh database on the PostgreSQL at BENCH_PG_URL (default postgresql://postgres@127.0.0.1:5432),
   starts `beacon serve --workers N` on it as a subprocess for each N of `--workers` (one server at a time
   is sent to; each keeps its own port), and reads the admin token the first prints.
2. Sends N realistic nested events (about 300 bytes each) as gzip NDJSON in batches from concurrent clients
   (bodies compressed before the clock starts), timing from the first request to the last 200, into a dataset
   that exists (created before the clock starts; `--new-dataset`: by the round's first request).
3. COPYs the same flattened rows (the same dataset id, times and JSON) with asyncpg's binary COPY into a plain
   table with the same (dataset_id, time) index, in the same batches over as many connections, and times that.
4. Repeats 2-3 for `--rounds` rounds, alternating, each from empty tables (the machine is shared, so one round
   alone can be unlucky), and prints each round, the best of each side and their ratio. The database is
   dropped at the end.
5. Also prints the CPU each side used per event (server + its PostgreSQL backends + the sending client, against
   the COPY client + its backends, read from /proc), which other load on the machine hardly moves, and the
   database's (backends') share of it.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serve import cpu_seconds, tree_cpu_seconds  # noqa: E402

SERVICES = ["checkout", "search", "auth", "catalog", "payments", "gateway"]
PATHS = ["/api/v1/orders", "/api/v1/search", "/api/v1/login", "/api/v1/items", "/api/v1/pay", "/healthz"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
AGENTS = ["Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", "curl/8.5.0", "okhttp/4.12.0", "python-httpx/0.28"]


def make_events(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    start = datetime.now(UTC) - timedelta(hours=20)
    events = []
    for i in range(n):
        status = rng.choice([200, 200, 200, 200, 201, 204, 301, 404, 500, 503])
        t = start + timedelta(milliseconds=i * 300 + rng.randint(0, 299))
        events.append(
            {
                "_time": t.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "service": rng.choice(SERVICES),
                "level": "error" if status >= 500 else "info",
                "message": f"request handled in {rng.randint(1, 900)} ms",
                "http": {
                    "method": rng.choice(METHODS),
                    "path": f"{rng.choice(PATHS)}/{rng.randint(1, 99999)}",
                    "status": status,
                    "duration_ms": round(rng.uniform(0.5, 900.0), 2),
                    "user_agent": rng.choice(AGENTS),
                },
                "user": {"id": f"u_{rng.randint(1, 50000)}", "country": rng.choice(["DE", "US", "FR", "JP", "BR"])},
                "trace_id": f"{rng.getrandbits(64):016x}",
                "host": f"web-{rng.randint(1, 12)}",
            }
        )
    return events


def flat(event: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in event.items():
        if isinstance(v, dict) and v:
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def start_server(
    db_url: str, port: int, data_dir: str, workers: int, *, expect_token: bool
) -> tuple[subprocess.Popen[str], str | None]:
    env = {
        **os.environ,
        "BEACON_DATABASE_URL": db_url,
        "BEACON_DATA_DIR": data_dir,
        "BEACON_RUN_SCHEDULER": "false",
        "BEACON_LOG_LEVEL": "warning",
        "BEACON_RATE_LIMIT_INGEST": "100000",
    }
    beacon = str(Path(sys.executable).with_name("beacon"))
    proc = subprocess.Popen(
        [beacon, "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    token = None
    deadline = time.monotonic() + 60
    while expect_token and token is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"beacon serve exited early with {proc.wait()}")
        if re.fullmatch(r"bcn_[A-Za-z0-9_-]{40}", line.strip()):
            token = line.strip()
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc, token
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("beacon serve did not become healthy")


def start_profiler(pid: int, path: str) -> subprocess.Popen[bytes]:
    """py-spy sampling the server at 200 Hz, writing collapsed stacks (one line per stack with its count)."""
    return subprocess.Popen(
        ["py-spy", "record", "--pid", str(pid), "--format", "raw", "-o", path, "-r", "200"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def run_ingest(port: int, token: str, bodies: list[bytes], clients: int, dataset: str) -> float:
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/x-ndjson",
        "Content-Encoding": "gzip",
    }

    async def client() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=300) as http:
            while not queue.empty():
                body = queue.get_nowait()
                r = await http.post(f"/v1/ingest/{dataset}", content=body, headers=headers)
                if r.status_code != 200 or r.json()["failed"]:
                    raise SystemExit(f"ingest failed: {r.status_code} {r.text[:500]}")

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - started


async def run_copy(url: str, batches: list[list[tuple[Any, ...]]], clients: int) -> tuple[float, float, float]:
    """(seconds, CPU seconds used by this process and the COPY backends, of which the backends') for `batches`."""
    setup = await asyncpg.connect(url)
    await setup.execute(
        "CREATE TABLE raw_events (dataset_id integer NOT NULL, time timestamptz NOT NULL, "
        "sys_time timestamptz NOT NULL, data jsonb NOT NULL)"
    )
    await setup.execute("CREATE INDEX raw_events_dataset_time ON raw_events (dataset_id, time)")
    await setup.close()
    conns = [await asyncpg.connect(url) for _ in range(clients)]
    queue: asyncio.Queue[list[tuple[Any, ...]]] = asyncio.Queue()
    for batch in batches:
        queue.put_nowait(batch)

    async def worker(conn: asyncpg.Connection) -> None:
        while not queue.empty():
            batch = queue.get_nowait()
            async with conn.transaction():
                await conn.copy_records_to_table(
                    "raw_events", records=batch, columns=["dataset_id", "time", "sys_time", "data"]
                )

    backends = [c.get_server_pid() for c in conns]
    client_before = time.process_time()
    db_before = sum(cpu_seconds(p) for p in backends)
    started = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    elapsed = time.perf_counter() - started
    db_cpu = sum(cpu_seconds(p) for p in backends) - db_before
    cpu = time.process_time() - client_before + db_cpu
    for c in conns:
        await c.close()
    return elapsed, cpu, db_cpu


async def backend_cpu(conn: asyncpg.Connection, db_name: str, known: dict[int, float]) -> float:
    """CPU seconds used since the last call by the database's backends (other than `conn`'s own)."""
    pids = await conn.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db_name)
    total = 0.0
    for row in pids:
        try:
            now = cpu_seconds(row["pid"])
        except FileNotFoundError:
            continue
        total += now - known.get(row["pid"], 0.0)
        known[row["pid"]] = now
    return total


def copy_rows(events: list[dict[str, Any]], dataset_id: int) -> list[tuple[Any, ...]]:
    """The rows the service stores for `events`: flattened, `_time` taken out, as (dataset_id, time, sys_time, data)."""
    sys_time = datetime.now(UTC)
    rows = []
    for e in events:
        f = flat(e)
        t = datetime.fromisoformat(f.pop("_time"))
        rows.append((dataset_id, t, sys_time, orjson.dumps(f).decode()))
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="alternating ingest / COPY rounds; best of each")
    parser.add_argument("--profile", help="record the server with py-spy into this file (collapsed stacks)")
    parser.add_argument("--new-dataset", action="store_true", help="each round's first request creates its dataset")
    parser.add_argument(
        "--workers", type=lambda v: [int(n) for n in v.split(",")], default=[1, 2], help="server processes, e.g. 1,2"
    )
    args = parser.parse_args()

    server_url = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432").rstrip("/")
    db_name = f"beacon_bench_{os.getpid()}"
    db_url = f"{server_url}/{db_name}"
    await admin(f"{server_url}/postgres", f'CREATE DATABASE "{db_name}"')
    data_dir = tempfile.mkdtemp(prefix="beacon-bench-")
    servers: dict[int, tuple[subprocess.Popen[str], int]] = {}
    try:
        events = make_events(args.events)
        batches = [events[i : i + args.batch] for i in range(0, len(events), args.batch)]
        raw_bytes = sum(len(orjson.dumps(e)) + 1 for e in events)
        bodies = [gzip.compress(b"".join(orjson.dumps(e) + b"\n" for e in b), 6) for b in batches]
        print(
            f"{len(events):,} events, {raw_bytes / len(events):.0f} bytes each on average, "
            f"{len(bodies)} gzip NDJSON bodies of {sum(map(len, bodies)) / len(bodies) / 1024:.0f} KiB, "
            f"{args.clients} clients, {args.rounds} rounds"
        )

        token: str | None = None
        for n in args.workers:
            port = free_port()
            proc, printed = start_server(db_url, port, data_dir, n, expect_token=token is None)
            servers[n] = (proc, port)
            token = token or printed
            if token is None:
                raise SystemExit("no admin token printed by beacon serve")
        assert token is not None
        for n, (_, port) in servers.items():
            # Warm-up (not timed): opens pool connections, creates the days' partitions, reaches each worker.
            await run_ingest(port, token, bodies[: 2 * n], 2 * n, "warmup")
        conn = await asyncpg.connect(db_url)
        ingest_rates: dict[int, list[float]] = {n: [] for n in args.workers}
        copy_rates: list[float] = []
        cpu_ratios: dict[int, list[float]] = {n: [] for n in args.workers}
        for r in range(args.rounds):
            row_batches: list[list[tuple[Any, ...]]] = []
            ingest_cpus: dict[int, float] = {}
            for n, (proc, port) in servers.items():
                # Every round starts from empty tables on both sides, so neither has a bigger index to maintain.
                await conn.execute("TRUNCATE events, event_rollups")
                spy = start_profiler(proc.pid, args.profile) if args.profile and r == 0 else None
                if spy is not None:
                    await asyncio.sleep(1.0)
                pg_cpu: dict[int, float] = {}
                await backend_cpu(conn, db_name, pg_cpu)
                cpu_before = tree_cpu_seconds(proc.pid)
                client_before = time.process_time()
                dataset = f"bench{r}w{n}"
                if not args.new_dataset:
                    # Steady state, as for an app that has shipped before: the dataset exists. (Into a new one, the
                    # first request holds the others' dataset insert until it commits, once per dataset.)
                    await conn.execute("INSERT INTO datasets (name) VALUES ($1)", dataset)
                ingest_s = await run_ingest(port, token, bodies, args.clients, dataset)
                server_cpu = tree_cpu_seconds(proc.pid) - cpu_before
                db_cpu = await backend_cpu(conn, db_name, pg_cpu)
                ingest_cpu = server_cpu + time.process_time() - client_before + db_cpu
                if spy is not None:
                    spy.send_signal(signal.SIGINT)
                    spy.wait(timeout=30)
                dataset_id = await conn.fetchval("SELECT id FROM datasets WHERE name = $1", dataset)
                stored = await conn.fetchval("SELECT count(*) FROM events WHERE dataset_id = $1", dataset_id)
                assert stored == len(events), f"stored {stored} events, expected {len(events)}"
                counted = await conn.fetchval("SELECT sum(count) FROM event_rollups WHERE dataset_id = $1", dataset_id)
                assert counted == len(events), f"the rollup counts {counted} events, expected {len(events)}"
                ingest_rates[n].append(len(events) / ingest_s)
                ingest_cpus[n] = ingest_cpu
                us = 1e6 / len(events)
                print(
                    f"round {r + 1}: ingest --workers {n}: {ingest_rates[n][-1]:9,.0f} events/s "
                    f"(CPU {ingest_cpu * us:4.1f} us/event: server {server_cpu * us:4.1f}, database {db_cpu * us:4.1f})"
                )
                row_batches = row_batches or _batched(copy_rows(events, dataset_id), args.batch)
            await conn.execute("DROP TABLE IF EXISTS raw_events")
            copy_s, copy_cpu, copy_db_cpu = await run_copy(db_url, row_batches, args.clients)
            copy_rates.append(len(events) / copy_s)
            for n in args.workers:
                cpu_ratios[n].append(copy_cpu / ingest_cpus[n])
            ratios = "  ".join(f"N={n}: {ingest_rates[n][-1] / copy_rates[-1]:.2f}" for n in args.workers)
            print(
                f"round {r + 1}: raw COPY {copy_rates[-1]:9,.0f} events/s "
                f"(CPU {copy_cpu * 1e6 / len(events):4.1f} us/event: database {copy_db_cpu * 1e6 / len(events):4.1f})"
                f"   ratios {ratios}"
            )
        await conn.close()
        best_copy = max(copy_rates)
        print(f"raw COPY (asyncpg binary COPY, {args.clients} connections): {best_copy:10,.0f} events/s")
        for n in args.workers:
            best = max(ingest_rates[n])
            print(
                f"ingest --workers {n} (HTTP, gzip NDJSON, {args.clients} clients): {best:10,.0f} events/s   "
                f"ratio to raw COPY (best of {args.rounds} each) {best / best_copy:.2f}   "
                f"CPU-cost ratio {max(cpu_ratios[n]):.2f}"
            )
    finally:
        for proc, _ in servers.values():
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=30)
        await admin(f"{server_url}/postgres", f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(data_dir, ignore_errors=True)


def _batched(rows: list[tuple[Any, ...]], size: int) -> list[list[tuple[Any, ...]]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


if __name__ == "__main__":
    asyncio.run(main())

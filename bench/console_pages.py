"""Benchmark: the console's datasets list (with each dataset's events, last event and ingest rate) and a
monitor's page (its value over 24 hours of windows), over 1,000,000 events in 24 hours, against baselines
measured in the same run.

    .venv/bin/python bench/console_pages.py [--events 1000000] [--runs 9] [--reuse]

Loads N events over 24 hours (bench/query.py's loader, COPY) into a fresh database, starts a real `beacon serve`,
creates a threshold monitor (`['bench'] | where status >= 500 | summarize count()`, 5-minute windows), signs in
and times, interleaved in each run:
- `GET /ui/datasets` (client wall time), against `GET /v1/datasets` (the plain list the page starts from);
- `GET /ui/monitors/{id}?range=24h` (client wall time), against the page's value query alone: the monitor's
  query summarized by 5-minute windows over the day, the SQL the query compiler makes of it, over asyncpg.
Prints the medians and their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from console import beacon  # noqa: E402
from query import DATASET, Server, events_database  # noqa: E402

from app.monitors.queries import parsed  # noqa: E402
from app.query.compiler import Compiled  # noqa: E402
from app.settings import asyncpg_dsn  # noqa: E402
from app.ui.monitor_values import windowed  # noqa: E402
from app.ui.ranges import resolve_range  # noqa: E402

HOURS = 24
APL = f"['{DATASET}'] | where status >= 500 | summarize count()"


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    began = time.perf_counter()
    await work()
    return (time.perf_counter() - began) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--server-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="beacon_console_bench")
    parser.add_argument("--reuse", action="store_true", help="keep the events of a previous run (same --events)")
    args = parser.parse_args()

    url, dataset_id, _ = await events_database(
        args.server_url, args.database, args.events, reuse=args.reuse, hours=HOURS
    )
    with tempfile.TemporaryDirectory() as workdir:
        server = Server(url, Path(workdir))
        try:
            token = beacon(server, "tokens", "create", "--name", "console", "--scope", "*")
            auth = {"Authorization": f"Bearer {token}"}
            async with (
                httpx.AsyncClient(base_url=server.base, timeout=120) as client,
                httpx.AsyncClient(base_url=server.base, timeout=120, headers=auth) as api,
            ):
                monitor = {
                    "name": "bench 5xx",
                    "type": "threshold",
                    "apl": APL,
                    "operator": "above",
                    "threshold": 100,
                    "interval_seconds": 60,
                    "range_seconds": 300,
                    "notifier_ids": [],
                }
                made = await api.post("/v1/monitors", json=monitor)
                made.raise_for_status()
                monitor_id = made.json()["id"]
                if (await client.post("/ui/login", data={"token": token})).status_code != 303:
                    raise RuntimeError("sign-in failed")

                now = datetime.now(UTC)
                rng = resolve_range("24h", None, None, now)
                query, _ = windowed(parsed(APL), timedelta(seconds=300))
                statement = Compiled(query, now=now, start=rng.start, end=rng.end).statement(
                    dataset_id, limit=50_001, newest_first=False, json_text=False
                )
                conn = await asyncpg.connect(asyncpg_dsn(url))

                async def get(c: httpx.AsyncClient, path: str) -> None:
                    r = await c.get(path)
                    if r.status_code != 200:
                        raise RuntimeError(f"{path}: {r.status_code} {r.text[:300]}")

                measures: dict[str, Callable[[], Awaitable[object]]] = {
                    "GET /ui/datasets (with events, last event, ingest rate)": lambda: get(client, "/ui/datasets"),
                    "GET /v1/datasets (baseline: the plain list)": lambda: get(api, "/v1/datasets"),
                    "GET /ui/monitors/{id}?range=24h": lambda: get(client, f"/ui/monitors/{monitor_id}?range=24h"),
                    "value query alone (baseline: compiled SQL over asyncpg)": lambda: conn.fetch(
                        statement.sql, *statement.args
                    ),
                }
                for work in measures.values():  # warm-up
                    await work()
                times: dict[str, list[float]] = {name: [] for name in measures}
                for _ in range(args.runs):  # interleaved, so that load from others hits all alike
                    for name, work in measures.items():
                        times[name].append(await timed(work))
                await conn.close()
        finally:
            server.stop()

    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"\n{args.events:,} events over {HOURS} h; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'measure (client wall time)':60} {'median ms':>10} {'min':>8} {'max':>8}")
    for name, ts in times.items():
        print(f"{name:60} {med[name]:>10.1f} {min(ts):>8.1f} {max(ts):>8.1f}")
    names = list(measures)
    print(f"ratio datasets page / plain list: {med[names[0]] / med[names[1]]:.2f}")
    print(f"ratio monitor page / its value query: {med[names[2]] / med[names[3]]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())

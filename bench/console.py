"""Benchmark: the console's dataset page for 10,000,000 events over 24 hours, against the events scan it replaces.

    .venv/bin/python bench/console.py [--events 10000000] [--runs 9] [--reuse] [--server-url postgresql://...]

Loads N events over 24 hours (COPY, with bench/query.py's loader, which also writes the per-minute rollup as
ingest would) into a fresh database, adds 20 annotations
(points and spans) in that range, starts a real `beacon serve`, signs in to the console and times
`GET /ui/datasets/bench` over the whole 24 hours (288 five-minute buckets): its server time (the `total` of the
page's `Server-Timing` header: access checks, annotations, the chart query, rendering) and the client's wall time.
The baseline, interleaved with the page in each run: the chart's count query over the events, the very SQL the
query service compiled `['bench'] | summarize count() by bin(_time, 5m)` to before the rollup (issue 19), sent
over asyncpg; and, for reference, the rollup statement the service sends now, alone. Prints the medians, their
ratio, and the target (page under 50 ms server time at 10 million events).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from query import DATASET, Server, events_database  # noqa: E402

from app.query.compiler import Compiled, Statement  # noqa: E402
from app.query.parser import parse  # noqa: E402
from app.query.rollup import rollup_statement  # noqa: E402
from app.settings import asyncpg_dsn  # noqa: E402
from app.ui.ranges import resolve_range  # noqa: E402

HOURS = 24
TARGET_MS = 50.0


def beacon(server: Server, *args: str) -> str:
    exe = str(Path(sys.executable).with_name("beacon"))
    out = subprocess.run([exe, *args], env=server.env, check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def server_total(header: str) -> float:
    found = re.search(r"total;dur=([\d.]+)", header)
    if not found:
        raise RuntimeError(f"no total in Server-Timing: {header!r}")
    return float(found.group(1))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--server-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="beacon_scale_bench")
    parser.add_argument("--reuse", action="store_true", help="keep the events of a previous run (same --events)")
    args = parser.parse_args()

    url, dataset_id, end = await events_database(
        args.server_url, args.database, args.events, reuse=args.reuse, hours=HOURS
    )
    start = end - timedelta(hours=HOURS)
    # The page's range: the loaded day, widened to whole 5-minute buckets (as the page itself does).
    rng = resolve_range(None, start.isoformat(), end.isoformat(), datetime.now(UTC))
    assert rng.step_text == "5m", rng

    with tempfile.TemporaryDirectory() as workdir:
        server = Server(url, Path(workdir))
        try:
            token = beacon(server, "tokens", "create", "--name", "console", "--scope", "*")
            async with httpx.AsyncClient(base_url=server.base, timeout=120) as client:
                auth = {"Authorization": f"Bearer {token}"}
                existing = await client.get("/v1/annotations", params={"datasets": DATASET}, headers=auth)
                if not existing.json()["data"]:
                    for i in range(20):
                        t = start + timedelta(hours=HOURS) * i / 20
                        body = {
                            "type": ("deploy", "incident")[i % 2],
                            "title": f"annotation {i}",
                            "datasets": [DATASET],
                            "time": t.isoformat(),
                            "url": f"https://ci.example/{i}",
                        }
                        if i % 2:
                            body["end_time"] = (t + timedelta(minutes=30)).isoformat()
                        (await client.post("/v1/annotations", json=body, headers=auth)).raise_for_status()
                r = await client.post("/ui/login", data={"token": token})
                if r.status_code != 303:
                    raise RuntimeError(f"sign-in failed: {r.status_code}")
                params = {"start": rng.start_text, "end": rng.end_text}

                compiled = Compiled(
                    parse(f"['{DATASET}'] | summarize count() by bin(_time, {rng.step_text})"),
                    now=datetime.now(UTC),
                    start=rng.start,
                    end=rng.end,
                )
                statement = compiled.statement(dataset_id, limit=rng.buckets + 2, newest_first=True)
                rolled = rollup_statement(compiled, statement, rng.buckets + 2, dataset_id)
                assert rolled is not None
                conn = await asyncpg.connect(asyncpg_dsn(url))

                async def page() -> tuple[float, float, str]:
                    began = time.perf_counter()
                    resp = await client.get(f"/ui/datasets/{DATASET}", params=params)
                    wall = (time.perf_counter() - began) * 1000
                    if resp.status_code != 200:
                        raise RuntimeError(f"page: {resp.status_code} {resp.text[:300]}")
                    timing = resp.headers["server-timing"]
                    return server_total(timing), wall, timing

                async def sql(sent: Statement = statement) -> tuple[float, dict[Any, int]]:
                    began = time.perf_counter()
                    rows = await conn.fetch(sent.sql, *sent.args)
                    return (time.perf_counter() - began) * 1000, {r[0]: r[1] for r in rows}

                _, _, timing = await page()  # warm-up: caches, prepared statements, the page's own first render
                _, counted = await sql()
                _, from_rollup = await sql(rolled)
                if counted != from_rollup:
                    raise RuntimeError("the rollup's answer differs from the events'")
                total = sum(counted.values())
                print(f"chart range {rng.start_text} .. {rng.end_text}: {total:,} events in {rng.buckets} buckets")
                pages, walls, sqls, rollups, timings = [], [], [], [], []
                for _ in range(args.runs):  # interleaved, so that load from others hits both alike
                    server_ms, wall_ms, timing = await page()
                    pages.append(server_ms)
                    walls.append(wall_ms)
                    timings.append(timing)
                    sqls.append((await sql())[0])
                    rollups.append((await sql(rolled))[0])
                await conn.close()
        finally:
            server.stop()

    p, w, s = statistics.median(pages), statistics.median(walls), statistics.median(sqls)
    ru = statistics.median(rollups)
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; medians of {args.runs} runs")
    print(f"{'measure':58} {'median ms':>10} {'min':>8} {'max':>8}")
    print(f"{'dataset page, server time (Server-Timing total)':58} {p:>10.1f} {min(pages):>8.1f} {max(pages):>8.1f}")
    print(f"{'dataset page, client wall time':58} {w:>10.1f} {min(walls):>8.1f} {max(walls):>8.1f}")
    print(f"{'baseline: count query over the events (asyncpg)':58} {s:>10.1f} {min(sqls):>8.1f} {max(sqls):>8.1f}")
    print(f"{'the rollup statement alone (asyncpg)':58} {ru:>10.1f} {min(rollups):>8.1f} {max(rollups):>8.1f}")
    print(f"ratio page server time / events count query: {p / s:.3f}")
    print(f"phases of the median page: {timings[pages.index(sorted(pages)[len(pages) // 2])]}")
    print(f"target: page server time < {TARGET_MS:.0f} ms -> {'met' if p < TARGET_MS else 'NOT met'} (median)")


if __name__ == "__main__":
    asyncio.run(main())

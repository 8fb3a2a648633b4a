"""Benchmark: one token's slow queries beside another token's small one (issue 25 item 5).

    .venv/bin/python bench/query_fairness.py [--events 1000000] [--slow 12] [--probes 8]

Loads a big dataset (N events, generated inside PostgreSQL) and a small one into a fresh database on
BEACON_BENCH_DATABASE_URL's server (default the machine's PostgreSQL), then, for each of two servers in turn —
`beacon serve` with the per-token cap out of the way (BEACON_QUERY_CONCURRENCY_PER_TOKEN=1000, as before the cap)
and with the default cap — times:
1. the small query of token B alone (median of --probes), the baseline;
2. one slow query of token A alone;
3. token A's --slow slow queries sent at once, and token B's small query sent --probes times one after another
   while they run: B's latency (median and worst) and its ratio to the baseline, and A's wall time for all of
   them (and how many were refused with 429).
The database is dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.settings import asyncpg_dsn  # noqa: E402
from bench.serve import finish, scratch_database, start_beacon, wait_ready  # noqa: E402

SLOW = {"apl": "['big'] | summarize dcount(msg), dcount(n) by service", "start_time": "2025-01-01T00:00:00Z"}
SMALL = {"apl": "['small'] | summarize count() by service", "start_time": "2025-01-01T00:00:00Z"}


async def load(url: str, events: int) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        for name, count in (("big", events), ("small", 200)):
            dataset_id = await conn.fetchval("INSERT INTO datasets (name) VALUES ($1) RETURNING id", name)
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS events_p20250301 PARTITION OF events"
                " FOR VALUES FROM ('2025-03-01T00:00:00Z') TO ('2025-03-02T00:00:00Z')"
            )
            await conn.execute(
                """
                INSERT INTO events (dataset_id, time, sys_time, data)
                SELECT $1, '2025-03-01T00:00:00Z'::timestamptz + make_interval(secs => i * 86000.0 / $2), now(),
                       jsonb_build_object('n', i, 'service', (ARRAY['api', 'web', 'db', 'queue'])[i % 4 + 1],
                                          'msg', 'event ' || (i * 7919 % $2))
                FROM generate_series(0, $2 - 1) AS i
                """,
                dataset_id,
                count,
            )
        await conn.execute("ANALYZE events")
    finally:
        await conn.close()


async def timed(http: httpx.AsyncClient, body: dict[str, Any], token: str) -> tuple[float, int]:
    started = time.perf_counter()
    r = await http.post("/v1/query", json=body, headers={"Authorization": f"Bearer {token}"})
    return time.perf_counter() - started, r.status_code


async def token(http: httpx.AsyncClient, name: str) -> str:
    r = await http.post("/v1/tokens", json={"name": name, "scopes": ["query"]})
    r.raise_for_status()
    return str(r.json()["token"])


async def measure(url: str, label: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    proc, admin_token, port = start_beacon(url, f"bench-fairness-{label}", env)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {admin_token}"}, timeout=120
        ) as http:
            await wait_ready(http, base)
            hog, other = await token(http, "hog"), await token(http, "other")
            for _ in range(3):  # warm: plans, connections
                await timed(http, SMALL, other)
            alone = [(await timed(http, SMALL, other))[0] for _ in range(args.probes)]
            slow_alone, _ = await timed(http, SLOW, hog)
            started = time.perf_counter()
            slow = [asyncio.create_task(timed(http, SLOW, hog)) for _ in range(args.slow)]
            await asyncio.sleep(0.5)  # the hog's queries have taken what they may
            beside = []
            for _ in range(args.probes):
                seconds, status = await timed(http, SMALL, other)
                assert status == 200, status
                beside.append(seconds)
            results = await asyncio.gather(*slow)
            hog_wall = time.perf_counter() - started
    finally:
        stop(proc)
    refused = sum(1 for _, status in results if status == 429)
    figures = {
        "alone_ms": statistics.median(alone) * 1000,
        "beside_median_ms": statistics.median(beside) * 1000,
        "beside_worst_ms": max(beside) * 1000,
        "slow_alone_s": slow_alone,
        "hog_wall_s": hog_wall,
        "refused": refused,
    }
    ratio = figures["beside_median_ms"] / figures["alone_ms"], figures["beside_worst_ms"] / figures["alone_ms"]
    print(
        f"{label:>8}: B's small query alone {figures['alone_ms']:.1f} ms; beside A's {args.slow} slow queries "
        f"median {figures['beside_median_ms']:.1f} ms, worst {figures['beside_worst_ms']:.1f} ms "
        f"(x{ratio[0]:.1f} / x{ratio[1]:.1f} the baseline); A: one slow query alone {slow_alone:.2f} s, "
        f"all {args.slow} in {hog_wall:.2f} s, {refused} refused (429)",
        flush=True,
    )
    return figures


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--slow", type=int, default=12)
    parser.add_argument("--probes", type=int, default=8)
    args = parser.parse_args()
    admin, name, url = await scratch_database("fairness")
    try:
        await load(url, args.events)
        print(f"{args.events:,} events in 'big', 200 in 'small'", flush=True)
        before = await measure(url, "no cap", {"BEACON_QUERY_CONCURRENCY_PER_TOKEN": "1000"}, args)
        after = await measure(url, "cap", {}, args)
        gain = before["beside_median_ms"] / after["beside_median_ms"]
        print(
            f"B's small query beside A's slow ones, median: {before['beside_median_ms']:.1f} ms without the cap, "
            f"{after['beside_median_ms']:.1f} ms with it ({gain:.1f}x faster); "
            f"worst {before['beside_worst_ms']:.1f} -> {after['beside_worst_ms']:.1f} ms"
        )
    finally:
        await finish(None, admin, name)


if __name__ == "__main__":
    asyncio.run(main())

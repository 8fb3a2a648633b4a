"""Benchmark: one token's slow queries beside another token's small one (issue 25 item 5).

    .venv/bin/python bench/query_fairness.py [--events 1000000] [--slow 12] [--probes 8] [--hold 5]

Loads a big dataset (N events, generated inside PostgreSQL) and a small one (on another day, so another
partition) into a fresh database on BEACON_BENCH_DATABASE_URL's server (default the machine's PostgreSQL), then,
for each of two servers in turn — `beacon serve` with the per-token cap out of the way
(BEACON_QUERY_CONCURRENCY_PER_TOKEN=1000, as before the cap) and with the default cap — times:
1. the small query of token B alone (median of --probes), the baseline;
2. token A's --slow slow queries sent at once, and token B's small query sent --probes times one after another
   while they run: B's latency (median and worst) and its ratio to the baseline, A's wall time for all of
   them, and how many were refused with 429. Two kinds of slow query:
   - `wait`: queries that wait in PostgreSQL (for a lock the benchmark holds on the big dataset's day for
     --hold seconds), as queries waiting on disk do: they hold their connections and little CPU;
   - `cpu`: a heavy summarize over the N events, which also competes for the machine's CPU.
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

DAY = {"start_time": "2025-03-01T00:00:00Z", "end_time": "2025-03-02T00:00:00Z"}
SLOW = {"apl": "['big'] | summarize dcount(msg), dcount(n) by service", **DAY}
WAIT = {"apl": "['big'] | summarize max(n)", **DAY}
SMALL = {
    "apl": "['small'] | summarize max(n) by service",
    "start_time": "2025-05-01T00:00:00Z",
    "end_time": "2025-05-02T00:00:00Z",
}


async def load(url: str, events: int) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        for name, count, day in (("big", events, "2025-03-01"), ("small", 200, "2025-05-01")):
            dataset_id = await conn.fetchval("INSERT INTO datasets (name) VALUES ($1) RETURNING id", name)
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS events_p{day.replace('-', '')} PARTITION OF events"
                f" FOR VALUES FROM ('{day}T00:00:00Z') TO (('{day}'::date + 1)::timestamptz)"
            )
            await conn.execute(
                f"""
                INSERT INTO events (dataset_id, time, sys_time, data)
                SELECT $1, '{day}T00:00:00Z'::timestamptz + make_interval(secs => i * 86000.0 / $2), now(),
                       jsonb_build_object('n', i, 'service', (ARRAY['api', 'web', 'db', 'queue'])[i % 4 + 1],
                                          'msg', 'event ' || (i::bigint * 7919 % $2))
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


async def new_token(http: httpx.AsyncClient, name: str) -> str:
    r = await http.post("/v1/tokens", json={"name": name, "scopes": ["query"]})
    r.raise_for_status()
    return str(r.json()["token"])


async def measure(
    url: str, label: str, env: dict[str, str], args: argparse.Namespace, token: str | None
) -> tuple[dict[str, dict[str, float]], str]:
    proc, admin_token, port = start_beacon(url, f"bench-fairness-{label}", env, token)
    base = f"http://127.0.0.1:{port}"
    found = {}
    try:
        async with httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {admin_token}"}, timeout=300
        ) as http:
            await wait_ready(http, base)
            hog, other = await new_token(http, "hog"), await new_token(http, "other")
            for _ in range(3):  # warm: plans, connections
                await timed(http, SMALL, other)
            alone = [(await timed(http, SMALL, other))[0] for _ in range(args.probes)]
            for kind in ("wait", "cpu"):
                found[kind] = await beside(http, url, kind, hog, other, args)
                found[kind]["alone_ms"] = statistics.median(alone) * 1000
                report(label, kind, found[kind], args)
    finally:
        stop(proc)
    return found, admin_token


async def beside(
    http: httpx.AsyncClient, url: str, kind: str, hog: str, other: str, args: argparse.Namespace
) -> dict[str, float]:
    """B's small query while A's slow ones run."""
    locker = await asyncpg.connect(asyncpg_dsn(url)) if kind == "wait" else None
    try:
        if locker is not None:
            await locker.execute("BEGIN; LOCK TABLE events_p20250301 IN ACCESS EXCLUSIVE MODE")
        started = time.perf_counter()
        slow = [asyncio.create_task(timed(http, WAIT if kind == "wait" else SLOW, hog)) for _ in range(args.slow)]
        await asyncio.sleep(0.5)  # the hog's queries have taken what they may
        probes = []
        for _ in range(args.probes):
            probes.append(asyncio.create_task(timed(http, SMALL, other)))
            await asyncio.sleep(0.1)
        if locker is not None:
            await asyncio.sleep(max(0.0, args.hold - (time.perf_counter() - started)))
            await locker.execute("COMMIT")  # the waiting queries finish now
        seconds = [s for s, status in await asyncio.gather(*probes) if status == 200]
        results = await asyncio.gather(*slow)
        return {
            "beside_median_ms": statistics.median(seconds) * 1000,
            "beside_worst_ms": max(seconds) * 1000,
            "hog_wall_s": time.perf_counter() - started,
            "refused": sum(1 for _, status in results if status == 429),
        }
    finally:
        if locker is not None:
            await locker.close()


def report(label: str, kind: str, figures: dict[str, float], args: argparse.Namespace) -> None:
    alone, median, worst = figures["alone_ms"], figures["beside_median_ms"], figures["beside_worst_ms"]
    print(
        f"{label:>7} / {kind:>4}: B's small query alone {alone:.1f} ms; beside A's {args.slow} slow queries median "
        f"{median:.1f} ms, worst {worst:.1f} ms (x{median / alone:.1f} / x{worst / alone:.1f} the baseline); "
        f"A's {args.slow} took {figures['hog_wall_s']:.2f} s, {figures['refused']:.0f} refused (429)",
        flush=True,
    )


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
    parser.add_argument("--hold", type=float, default=5.0, help="seconds the `wait` queries wait")
    args = parser.parse_args()
    admin, name, url = await scratch_database("fairness")
    try:
        await load(url, args.events)
        print(f"{args.events:,} events in 'big', 200 in 'small'", flush=True)
        before, token = await measure(url, "no cap", {"BEACON_QUERY_CONCURRENCY_PER_TOKEN": "1000"}, args, None)
        after, _ = await measure(url, "cap", {}, args, token)
        for kind in ("wait", "cpu"):
            b, a = before[kind], after[kind]
            print(
                f"{kind}: B's small query beside A's slow ones, median {b['beside_median_ms']:.1f} ms without the cap, "
                f"{a['beside_median_ms']:.1f} ms with it ({b['beside_median_ms'] / a['beside_median_ms']:.1f}x); "
                f"worst {b['beside_worst_ms']:.1f} -> {a['beside_worst_ms']:.1f} ms"
            )
    finally:
        await finish(None, admin, name)


if __name__ == "__main__":
    asyncio.run(main())

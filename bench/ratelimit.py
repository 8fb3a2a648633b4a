"""What a rate-limit decision costs, by where the budgets live: process memory, Redis, PostgreSQL.

    .venv/bin/python bench/ratelimit.py [--decisions 3000] [--concurrency 1,8]

Creates a fresh database on BENCH_PG_URL (default postgresql://postgres@127.0.0.1:5432) and applies the
migrations, then times `RateLimiter.hit` (what every authenticated request awaits) for each store: one token
at a time in sequence, and `--concurrency` requests of one token at once (what two worker processes see
when one client sends in parallel: they queue on the key's advisory lock in PostgreSQL). Redis at
BENCH_REDIS_URL (default redis://127.0.0.1:6379/8) is skipped if unreachable. Prints the median and p99 per
decision and the throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.db.migrate import upgrade
from app.ratelimit import RateLimiter
from app.settings import RateLimits, Settings


async def measure(limiter: RateLimiter, decisions: int, concurrency: int) -> tuple[float, float, float]:
    """(median ms, p99 ms, decisions per second)."""
    token = f"tok_{uuid.uuid4().hex}"
    for _ in range(20):
        await limiter.hit(token, "read")  # warm-up: connections, prepared statements
    times: list[float] = []

    async def one() -> None:
        began = time.perf_counter()
        await limiter.hit(token, "read")
        times.append((time.perf_counter() - began) * 1000)

    started = time.perf_counter()
    for _ in range(decisions // concurrency):
        await asyncio.gather(*(one() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1], len(times) / elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--concurrency", type=lambda v: [int(n) for n in v.split(",")], default=[1, 8])
    args = parser.parse_args()
    server = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432").rstrip("/")
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")
    name = f"beacon_rl_bench_{os.getpid()}"
    admin = await asyncpg.connect(f"{server}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = f"{server}/{name}"
        await asyncio.to_thread(upgrade, url)
        limits = RateLimits(read=10**9)  # never refused: every decision does the full work
        stores = {
            "memory (one process)": Settings(database_url=url, rate_limits=limits),
            "PostgreSQL (shared)": Settings(database_url=url, rate_limits=limits, rate_limit_store="postgres"),
            "Redis (shared)": Settings(
                database_url=url, rate_limits=limits, redis_url=redis_url, redis_key_prefix=f"bench-{name}"
            ),
        }
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.decisions} decisions each")
        print(f"{'store':24} {'concurrency':>11} {'median ms':>10} {'p99 ms':>8} {'decisions/s':>12}")
        for label, settings in stores.items():
            limiter = RateLimiter(settings)
            try:
                for concurrency in args.concurrency:
                    median, p99, rate = await measure(limiter, args.decisions, concurrency)
                    print(f"{label:24} {concurrency:>11} {median:>10.3f} {p99:>8.3f} {rate:>12,.0f}")
            except Exception as exc:  # Redis not running: say so and go on
                print(f"{label:24} skipped: {type(exc).__name__}: {exc}")
            finally:
                await limiter.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())

"""What an idle `beacon serve` costs: CPU seconds of the server (all its worker processes) and PostgreSQL
transactions in its database over a quiet window, with no request, monitor or alert, in two set-ups:

- before: the code of a git revision (default 7e95bc3: every tick's monitor lanes each opened a transaction),
  extracted into a temporary directory and run from there;
- after: this checkout's.

Each round starts one server per set-up on a scratch database (they alternate, so the machine's load falls on
both alike), lets it settle, then measures. The transactions are PostgreSQL's own count (`pg_stat_database`,
flushed by the backends about once a second: the window's edges blur by a second's worth).

    .venv/bin/python bench/idle.py [--rounds 2] [--seconds 30] [--before REV]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.ab import alternate  # noqa: E402
from bench.cli_start import import_path  # noqa: E402
from bench.serve import finish, scratch_database, start_beacon, tree_cpu_seconds, wait_ready  # noqa: E402

SETTLE_SECONDS = 15  # start-up work (migrations, the first ticks) ends before the window opens
TRANSACTIONS = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1"


async def idle_cost(tree: Path | None, seconds: float) -> tuple[float, int]:
    """(CPU seconds, transactions) of an idle server over `seconds`; `tree`: run that code instead of this one's."""
    admin, name, url = await scratch_database("idle")
    extra = {"PYTHONPATH": import_path(tree)} if tree is not None else {}
    proc = None
    try:
        proc, _, port = start_beacon(url, name, extra)
        async with httpx.AsyncClient(timeout=30) as http:
            await wait_ready(http, f"http://127.0.0.1:{port}")
        await asyncio.sleep(SETTLE_SECONDS)
        xacts, cpu = await admin.fetchval(TRANSACTIONS, name), tree_cpu_seconds(proc.pid)
        await asyncio.sleep(seconds)
        return tree_cpu_seconds(proc.pid) - cpu, await admin.fetchval(TRANSACTIONS, name) - xacts
    finally:
        await finish(proc, admin, name)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--before", default="7e95bc3")
    args = parser.parse_args()
    found = await alternate(args.before, args.rounds, lambda tree: idle_cost(tree, args.seconds))
    per_minute = 60 / args.seconds
    medians = {}
    for name, runs in found.items():
        cpu, xacts = (statistics.median(r[i] for r in runs) * per_minute for i in (0, 1))
        medians[name] = (cpu, xacts)
        rounds = ", ".join(f"{c:.2f} s / {x}" for c, x in runs)
        print(f"{name:20} idle, per minute: CPU {cpu:5.2f} s, transactions {xacts:6.0f}  (each window: {rounds})")
    (cpu_b, xact_b), (cpu_a, xact_a) = medians.values()
    load = os.getloadavg()[0]
    print(f"after / before: CPU {cpu_a / cpu_b:.2f}, transactions {xact_a / xact_b:.2f}  (load {load:.1f})")


if __name__ == "__main__":
    asyncio.run(main())

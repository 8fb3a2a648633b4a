"""Benchmark: reading the stored routing document, as the routing job does twice per batch (placing, then the flush's
suppression context), with a large document: `--routes` child routes (default 1,000, each with two matchers, its
notifier and its grouping: 160 KB of JSON, an `alertmanager.yml` of a big organisation).

The code of a git revision (the baseline, extracted into a temporary directory) and this checkout's read the same
scratch database in turns, each in a process of its own; reports the median time of one read (`config.current`, the
row unchanged, as between two writes of the document) and the ratio. Needs a PostgreSQL server. From the repository
root:
    .venv/bin/python bench/routing_document.py [--routes 1000] [--reads 300] [--rounds 6] [--before REV]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg

from app.settings import asyncpg_dsn
from bench.cli_start import extract, import_path
from bench.serve import scratch_database

ROOT = Path(__file__).resolve().parent.parent


def document(routes: int) -> str:
    children = [
        {
            "matchers": [f'team="team-{i}"', 'env=~"prod|staging"'],
            "notifier_ids": [f"team-{i}"],
            "group_by": ["alertname", "cluster"],
            "group_wait_seconds": 30,
            "routes": [],
        }
        for i in range(routes)
    ]
    root = {"notifier_ids": ["default"], "group_by": ["alertname"], "routes": children}
    return json.dumps({"route": root, "inhibit_rules": [], "time_intervals": []})


# One side, run with its tree first on the path: `reads` reads of the unchanged document on one connection; prints
# the median in microseconds. The first read compiles it, on either side.
CHILD = """
import asyncio, statistics, sys, time
import asyncpg
from app.routing import config

async def main(dsn, reads):
    conn = await asyncpg.connect(dsn)
    await config.current(conn)
    took = []
    for _ in range(reads):
        started = time.perf_counter()
        await config.current(conn)
        took.append(time.perf_counter() - started)
    print(config.__file__, statistics.median(took) * 1e6)
    await conn.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--routes", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--before", default="HEAD~1")
    args = parser.parse_args()
    admin, name, url = await scratch_database("routingdoc")
    try:
        text = document(args.routes)
        conn = await asyncpg.connect(asyncpg_dsn(url))
        await conn.execute("UPDATE routing_config SET version = 2, document = $1::jsonb WHERE id = 1", text)
        await conn.close()
        print(f"document: {args.routes} routes, {len(text) / 1000:.0f} KB")
        with tempfile.TemporaryDirectory() as scratch:
            before = extract(args.before, Path(scratch))
            sides: dict[str, list[float]] = {f"before ({args.before})": [], "after": []}
            for _ in range(args.rounds):
                for side, tree in zip(sides, (before, ROOT), strict=True):
                    argv = [sys.executable, "-c", CHILD, asyncpg_dsn(url), str(args.reads)]
                    env = {**os.environ, "PYTHONPATH": import_path(tree)}  # and run in the tree: it comes first
                    run = functools.partial(subprocess.run, env=env, cwd=tree, capture_output=True, text=True)
                    done = await asyncio.to_thread(run, argv)
                    if done.returncode != 0:
                        raise SystemExit(done.stderr)
                    read_from, took = done.stdout.split()
                    assert read_from.startswith(str(tree)), read_from  # each side runs its own code
                    sides[side].append(float(took))
        medians = {side: statistics.median(v) for side, v in sides.items()}
        for side, value in medians.items():
            print(f"{side:>24}: one read {value:8.0f} us (median of {args.rounds} rounds of {args.reads} reads)")
        old, new = medians.values()
        batch = f"{2 * old / 1000:.2f} -> {2 * new / 1000:.2f} ms"
        print(f"after / before: {new / old:.2f}; per routing batch (two reads): {batch}")
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())

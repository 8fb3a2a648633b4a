"""What a `POST /api/v2/alerts` of one alert costs, as Prometheus sends it (labels, annotations, `startsAt`,
`endsAt`, `generatorURL`), answered by `beacon serve`: the code of a git revision (the baseline, extracted into a
temporary directory) against this checkout's, both running at once on scratch databases, the posts alternating
between them so that the machine's load falls on both alike. Prometheus waits for every Alertmanager's answer
before it sends its next batch: this time is in its firing-to-notification latency (bench/alertmanager.py).

    .venv/bin/python bench/alerts_post.py [--posts 400] [--before REV]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.ab import trees  # noqa: E402
from bench.cli_start import import_path  # noqa: E402
from bench.serve import finish, scratch_database, start_beacon, wait_ready  # noqa: E402


def alert(n: int) -> dict[str, object]:
    now = datetime.now(UTC)
    return {
        "labels": {"alertname": "PostCost", "instance": f"host-{n % 50}", "job": "bench"},
        "annotations": {"summary": "a post's cost"},
        "startsAt": now.isoformat(),
        "endsAt": (now + timedelta(minutes=4)).isoformat(),
        "generatorURL": "http://prometheus.example/graph",
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=400)
    parser.add_argument("--before", default="HEAD~1")
    args = parser.parse_args()
    servers: dict[str, tuple[str, dict[str, str]]] = {}
    cleanup = []
    with tempfile.TemporaryDirectory() as scratch:
        sides = trees(args.before, Path(scratch))
        try:
            for i, (name, tree) in enumerate(sides.items()):
                admin, db, url = await scratch_database(f"post{i}")
                proc, token, port = start_beacon(url, db, {"PYTHONPATH": import_path(tree)} if tree else {})
                cleanup.append((proc, admin, db))
                servers[name] = (f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"})
            took: dict[str, list[float]] = {name: [] for name in servers}
            async with httpx.AsyncClient(timeout=30) as http:
                for base, _ in servers.values():
                    await wait_ready(http, base)
                for n in range(args.posts + 20):
                    for name, (base, auth) in servers.items():
                        started = time.perf_counter()
                        r = await http.post(f"{base}/api/v2/alerts", json=[alert(n)], headers=auth)
                        elapsed = time.perf_counter() - started
                        assert r.status_code == 200, r.text
                        if n >= 20:  # the first posts warm the connections and caches
                            took[name].append(elapsed * 1000)
                    await asyncio.sleep(0.005)  # the router's placing runs between posts, as between batches
        finally:
            for proc, admin, db in cleanup:
                await finish(proc, admin, db)
    p50 = {}
    for name, ms in took.items():
        q = statistics.quantiles(ms, n=10)
        p50[name] = statistics.median(ms)
        print(f"{name:22} POST /api/v2/alerts (1 alert): p50 {p50[name]:.2f} ms, p90 {q[-1]:.2f} ms")
    before, after = p50.values()
    print(f"after / before (p50): {after / before:.2f}  (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    asyncio.run(main())

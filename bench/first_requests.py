"""The first requests and notifications of a fresh `beacon serve` (one worker), against its later ones in the same
run (the baseline: what the same request costs once the process is warm), in two set-ups that alternate round by
round: before (the code of a git revision, extracted and run from there) and after (this checkout's).

Each round starts a server on a scratch database, with one webhook notifier on a local receiver and a route with
`group_wait: 0`, lets it settle, then posts `--alerts` alerts to `POST /api/v2/alerts` one at a time (0.5 s apart,
each its own group) and records each POST's answer time and each notification's arrival after its POST. A quiet
spell in production (asyncpg closes connections idle for 5 minutes) leaves a server as cold as a fresh one.

    .venv/bin/python bench/first_requests.py [--rounds 3] [--alerts 6] [--before REV]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.ab import alternate  # noqa: E402
from bench.cli_start import import_path  # noqa: E402
from bench.monitors import Receiver  # noqa: E402
from bench.serve import finish, scratch_database, start_beacon, wait_ready, webhook_notifier  # noqa: E402

SETTLE_SECONDS = 3


async def first_requests(tree: Path | None, alerts: int) -> tuple[list[float], list[float]]:
    """(POST answer ms, POST -> notification ms) for each alert, in order."""
    admin, name, url = await scratch_database("first")
    extra = {"PYTHONPATH": import_path(tree)} if tree is not None else {}
    receiver = Receiver()
    hook = await receiver.start()
    proc = None
    try:
        proc, token, port = start_beacon(url, name, extra, extra_args=("--workers", "1"))
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            await wait_ready(http, base)
            notifier = await webhook_notifier(http, base, hook)
            version = (await http.get(f"{base}/v1/routing")).json()["version"]
            route = {"group_by": ["n"], "group_wait_seconds": 0, "notifier_ids": [notifier]}
            r = await http.put(f"{base}/v1/routing", headers={"If-Match": version}, json={"route": route})
            r.raise_for_status()
            await asyncio.sleep(SETTLE_SECONDS)
            posts, notified = [], []
            for i in range(alerts):
                began = time.time()
                r = await http.post(f"{base}/api/v2/alerts", json=[{"labels": {"alertname": "First", "n": str(i)}}])
                r.raise_for_status()
                posts.append((time.time() - began) * 1000)
                for _ in range(5000):
                    if len(receiver.got) > i:
                        break
                    await asyncio.sleep(0.001)
                notified.append((receiver.got[i][0] - began) * 1000)
                await asyncio.sleep(0.5)
        return posts, notified
    finally:
        await finish(proc, admin, name)


def _line(name: str, runs: list[list[float]]) -> tuple[float, float]:
    first = statistics.median(r[0] for r in runs)
    later = statistics.median(x for r in runs for x in r[1:])
    print(f"  {name:24} first {first:6.1f} ms, later {later:6.1f} ms (median), first / later {first / later:.2f}")
    return first, later


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--alerts", type=int, default=6)
    parser.add_argument("--before", default="cf68ccc")
    args = parser.parse_args()
    found = await alternate(args.before, args.rounds, lambda tree: first_requests(tree, args.alerts))
    firsts: dict[str, dict[str, float]] = {}
    for name, runs in found.items():
        print(name)
        firsts[name] = {
            "POST": _line("POST /api/v2/alerts", [p for p, _ in runs])[0],
            "notification": _line("POST -> notification", [n for _, n in runs])[0],
        }
    before, after = firsts.values()
    print("after / before, first: " + ", ".join(f"{k} {after[k] / before[k]:.2f}" for k in before))


if __name__ == "__main__":
    asyncio.run(main())

"""Benchmark: the alert views at 10,000 silences x 12,000 alerts, with /healthz sampled during each request
(issue 25 item 3).

    .venv/bin/python bench/alert_views.py [--silences 10000] [--alerts 12000] [--runs 3]

Starts a real `beacon serve` on a scratch database (BEACON_BENCH_DATABASE_URL's server, default the machine's
PostgreSQL), sets a routing tree (routes by team, grouping by alertname and cluster, an inhibit rule), and writes
N firing alerts and M active silences straight into the database (as the API would store them). The silences are
a mix: half `alertname="…", instance="…"` (one host), a fifth `alertname="…", cluster=~"eu-.*"`, some by team
and severity with `job!="batch"`, a tenth by an instance regex alone (`instance=~"host-12[0-9]"`), a few by an
alertname regex. For each view it times the request (median of --runs) while another client asks /healthz every
10 ms, and reports the slowest /healthz seen during it:
- `GET /v1/alerts/groups`, `GET /api/v2/alerts`, `GET /api/v2/alerts/groups`, `GET /v1/alerts?limit=100`,
- `POST /v1/routing/test` (one label set), the console's alerts page and its silences page ("how many alerts
  it holds back").
Each view is timed first with no silence (the baseline: listing the alerts alone), then with the silences;
the ratio is the cost the silences add.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.routing.labels import fingerprint  # noqa: E402
from app.settings import asyncpg_dsn  # noqa: E402
from bench.serve import finish, scratch_database, start_beacon, wait_ready  # noqa: E402

CLUSTERS = ["eu-1", "eu-2", "us-1", "us-2"]
JOBS = ["api", "batch", "web"]


def alert_labels(i: int) -> dict[str, str]:
    return {
        "alertname": f"Alert{i % 200}",
        "instance": f"host-{i}",
        "cluster": CLUSTERS[i % 4],
        "severity": "critical" if i % 7 == 0 else "warning",
        "team": f"team{i % 50}",
        "job": JOBS[i % 3],
    }


def silence_matchers(rng: random.Random, i: int, alerts: int) -> list[str]:
    kind = i % 20
    if kind < 10:
        return [f'alertname="Alert{rng.randrange(200)}"', f'instance="host-{rng.randrange(alerts * 2)}"']
    if kind < 14:
        return [f'alertname="Alert{rng.randrange(200)}"', 'cluster=~"eu-.*"']
    if kind < 17:
        return [f'team="team{rng.randrange(50)}"', 'severity="warning"', 'job!="batch"']
    if kind < 19:
        return [f'instance=~"host-{rng.randrange(alerts // 10)}[0-9]"']
    return [f'alertname=~"Alert{rng.randrange(20)}[0-9]"', 'severity="critical"']


async def write_alerts(url: str, count: int) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        now = datetime.now(UTC)
        rows = []
        for i in range(count):
            labels = alert_labels(i)
            rows.append(
                (
                    fingerprint(labels),
                    orjson.dumps(labels).decode(),
                    orjson.dumps({"summary": f"{labels['alertname']} on {labels['instance']}"}).decode(),
                    "external",
                    now - timedelta(seconds=i),
                )
            )
        await conn.executemany(
            "INSERT INTO alerts (fingerprint, labels, annotations, source, starts_at)"
            " VALUES ($1, $2::jsonb, $3::jsonb, $4, $5)",
            rows,
        )
    finally:
        await conn.close()


async def write_silences(url: str, count: int, alerts: int) -> None:
    rng = random.Random(25)
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        now = datetime.now(UTC)
        rows = [
            (f"sil_{i:08x}", silence_matchers(rng, i, alerts), now - timedelta(hours=1), now + timedelta(days=1))
            for i in range(count)
        ]
        await conn.executemany(
            "INSERT INTO silences (id, matchers, starts_at, ends_at, comment, created_by, created_at, updated_at)"
            " VALUES ($1, $2, $3, $4, 'bench', 'bench', $3, $3)",
            rows,
        )
    finally:
        await conn.close()


async def routing_tree(http: httpx.AsyncClient) -> None:
    version = (await http.get("/v1/routing")).json()["version"]
    doc = {
        "route": {
            "notifier_ids": [],
            "group_by": ["alertname", "cluster"],
            "group_wait_seconds": 3600,
            "routes": [
                {"matchers": [f'team="team{t}"'], "group_by": ["alertname", "cluster", "team"], "continue": t % 2 == 0}
                for t in range(10)
            ],
        },
        "inhibit_rules": [
            {
                "source_matchers": ["severity=critical"],
                "target_matchers": ["severity=warning"],
                "equal": ["alertname", "cluster"],
            }
        ],
    }
    (await http.put("/v1/routing", headers={"If-Match": version}, json=doc)).raise_for_status()


# /healthz asked every 10 ms by a process of its own (the benchmark's client parses megabytes of answers on its
# own event loop, which would delay its own probes): it prints the slowest answer once its stdin closes.
SAMPLER = """
import sys, threading, time, httpx
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
worst = 0.0
with httpx.Client(base_url=sys.argv[1], timeout=600) as http:
    print("ready", flush=True)
    while not done.is_set():
        began = time.perf_counter()
        http.get("/healthz").raise_for_status()
        worst = max(worst, time.perf_counter() - began)
        time.sleep(0.01)
print(worst, flush=True)
"""


async def with_healthz(base: str, request: Any) -> tuple[float, float, httpx.Response]:
    """The request's wall time and the slowest /healthz answered while it ran (asked every 10 ms)."""
    sampler = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SAMPLER, base, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert sampler.stdin is not None and sampler.stdout is not None
    assert (await sampler.stdout.readline()).strip() == b"ready"
    await asyncio.sleep(0.05)
    began = time.perf_counter()
    response = await request()
    elapsed = time.perf_counter() - began
    sampler.stdin.close()
    worst = float((await sampler.stdout.read()).strip())
    await sampler.wait()
    response.raise_for_status()
    return elapsed, worst, response


def views(api: httpx.AsyncClient, browser: httpx.AsyncClient) -> dict[str, Any]:
    probe = alert_labels(1234)
    return {
        "GET /v1/alerts/groups": lambda: api.get("/v1/alerts/groups"),
        "GET /api/v2/alerts": lambda: api.get("/api/v2/alerts"),
        "GET /api/v2/alerts/groups": lambda: api.get("/api/v2/alerts/groups"),
        "GET /v1/alerts?limit=100": lambda: api.get("/v1/alerts", params={"limit": 100}),
        "POST /v1/routing/test": lambda: api.post("/v1/routing/test", json={"labels": probe}),
        "GET /ui/alerts": lambda: browser.get("/ui/alerts"),
        "GET /ui/silences": lambda: browser.get("/ui/silences"),
    }


async def measure(base: str, calls: dict[str, Any], runs: int) -> dict[str, tuple[float, float, int]]:
    found = {}
    for name, call in calls.items():
        times, worst, size = [], 0.0, 0
        for _ in range(runs):
            elapsed, healthz, response = await with_healthz(base, call)
            times.append(elapsed)
            worst = max(worst, healthz)
            size = len(response.content)
        found[name] = (statistics.median(times), worst, size)
        print(f"  {name}: {found[name][0] * 1000:.0f} ms, /healthz at worst {worst * 1000:.0f} ms", flush=True)
    return found


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--silences", type=int, default=10_000)
    parser.add_argument("--alerts", type=int, default=12_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    admin, name, url = await scratch_database("alertviews")
    proc = None
    try:
        # One process: /healthz must reach the event loop the views run on.
        proc, token, port = start_beacon(url, name, extra_args=("--workers", "1"))
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(base_url=base, headers=headers, timeout=1800) as api,
            httpx.AsyncClient(base_url=base, timeout=1800) as browser,
        ):
            await wait_ready(api, base)
            await routing_tree(api)
            await write_alerts(url, args.alerts)
            assert (await browser.post("/ui/login", data={"token": token})).status_code in (200, 303)
            calls = views(api, browser)
            print("no silence:", flush=True)
            baseline = await measure(base, calls, args.runs)
            await write_silences(url, args.silences, args.alerts)
            print(f"{args.silences:,} silences:", flush=True)
            loaded = await measure(base, calls, args.runs)
            silenced = (await api.get("/v1/alerts", params={"state": "suppressed", "limit": 1})).json()
        print(f"{args.alerts:,} firing alerts, {args.silences:,} active silences; median of {args.runs} runs")
        print(f"{'view':28} {'no silence':>11} {'silences':>10} {'ratio':>6} {'worst /healthz meanwhile':>26}")
        for view, (seconds, worst, size) in loaded.items():
            base_s, base_worst, _ = baseline[view]
            print(
                f"{view:28} {base_s * 1000:9.0f} ms {seconds * 1000:7.0f} ms {seconds / base_s:6.2f} "
                f"{base_worst * 1000:10.0f} ms / {worst * 1000:6.0f} ms   ({size / 1e6:.1f} MB)"
            )
        print(f"(suppressed alerts listed: {bool(silenced['data'])})")
    finally:
        await finish(proc, admin, name)


if __name__ == "__main__":
    asyncio.run(main())

"""Benchmark: the console's alerts page during a big outage, against the API call that gathers the same groups.

    .venv/bin/python bench/console_alerts.py [--alerts 10000] [--groups 500] [--runs 9]

Starts a real `beacon serve` on a scratch database, routes by `alertname, service` (no notifier: nothing is
sent), posts N firing alerts into G groups (100 per request), signs in to the console and times, interleaved
in each run:
- `GET /ui/alerts`: every alert scanned, grouped and counted; the first 200 groups shown with 50 alerts each;
- `GET /ui/alerts?group=<key>`: one group whole;
- the baseline `GET /v1/alerts/groups`: the same scan and grouping, every alert as JSON.
Prints client wall-time medians (min-max), the page's size, and the page / API ratio.
Needs a PostgreSQL server: BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.serve import finish, scratch_database, start_beacon, wait_ready

BATCH = 100


async def timed(http: httpx.AsyncClient, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    r = await http.get(url)
    r.raise_for_status()
    return (time.perf_counter() - started) * 1000, len(r.content)


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ms ({min(values):.0f}-{max(values):.0f})"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alerts", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    per_group = args.alerts // args.groups

    admin, name, url = await scratch_database("alertspage")
    proc = None
    try:
        proc, token, port = start_beacon(url, name)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as api:
            await wait_ready(api, base)
            version = (await api.get(f"{base}/v1/routing")).json()["version"]
            route = {"notifier_ids": [], "group_by": ["alertname", "service"], "group_wait_seconds": 3600}
            (
                await api.put(f"{base}/v1/routing", headers={"If-Match": version}, json={"route": route})
            ).raise_for_status()
            until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
            for j0 in range(0, args.alerts, BATCH):
                body = [
                    {
                        "labels": {
                            "alertname": "LatencyHigh",
                            "service": f"svc{j // per_group:04d}",
                            "instance": f"i{j}",
                        },
                        "annotations": {"summary": f"p99 latency high on instance i{j}"},
                        "ends_at": until,
                    }
                    for j in range(j0, min(j0 + BATCH, args.alerts))
                ]
                (await api.post(f"{base}/v1/alerts", json=body)).raise_for_status()
            groups = (await api.get(f"{base}/v1/alerts/groups")).json()["data"]
            assert len(groups) == args.groups, len(groups)
            one = quote(groups[len(groups) // 2]["group_key"])

            async with httpx.AsyncClient(base_url=base, timeout=120) as browser:
                r = await browser.post("/ui/login", data={"token": token}, follow_redirects=False)
                assert r.status_code == 303, r.text
                page_ms, group_ms, api_ms = [], [], []
                sizes = {}
                for _ in range(args.runs):
                    ms, sizes["page"] = await timed(browser, "/ui/alerts")
                    page_ms.append(ms)
                    ms, sizes["group"] = await timed(browser, f"/ui/alerts?group={one}")
                    group_ms.append(ms)
                    ms, sizes["api"] = await timed(api, f"{base}/v1/alerts/groups")
                    api_ms.append(ms)
        print(f"{args.alerts} firing alerts in {args.groups} groups; {args.runs} runs, client wall time")
        print(f"GET /ui/alerts (200 groups x 50 shown):  {summary(page_ms)}, {sizes['page'] / 1e6:.1f} MB")
        print(f"GET /ui/alerts?group=<one group>:        {summary(group_ms)}, {sizes['group'] / 1e3:.0f} kB")
        print(f"GET /v1/alerts/groups (baseline, JSON):  {summary(api_ms)}, {sizes['api'] / 1e6:.1f} MB")
        print(
            f"ratio page / API: {statistics.median(page_ms) / statistics.median(api_ms):.2f}; "
            f"one group / API: {statistics.median(group_ms) / statistics.median(api_ms):.2f}"
        )
    finally:
        await finish(proc, admin, name)


if __name__ == "__main__":
    asyncio.run(main())

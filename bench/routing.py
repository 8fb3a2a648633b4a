"""Benchmark: 10,000 firing alerts posted to one `beacon serve` in one minute, into 500 groups, notifying a local
webhook receiver through the routing tree.

`--layout steady` (default): each group's 20 alerts arrive together (a `POST /v1/alerts` of 100 alerts = 5 groups
every 0.6 s), so groups form steadily over the minute and each should notify `group_wait` after it formed.
`--layout burst`: alert j goes to group j % 500, so every group forms in the first 3 s and all 500 fall due
within 3 s of each other, while alerts keep arriving into them. Reports
- per group, first post -> its first notification received, against `group_wait` (the overhead is the rest);
- last post -> every group's first notification received;
- that every group notified exactly once, listing its 20 alerts;
- `POST /v1/alerts` latency per 100-alert request, and the server process's CPU over the run.

Needs a PostgreSQL server (a scratch database is created and dropped). Run from the repository root:
    .venv/bin/python bench/routing.py [--alerts 10000] [--groups 500] [--seconds 60] [--group-wait 30]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
import httpx

from app.settings import asyncpg_dsn
from bench.monitors import Receiver, pct
from bench.serve import finish, scratch_database, start_beacon, tree_cpu_seconds, wait_ready, webhook_notifier

BATCH = 100


def alerts_for(j0: int, n: int, groups: int, per_group: int, until: datetime, burst: bool) -> list[dict]:
    found = []
    for j in range(j0, j0 + n):
        g, i = (j % groups, j // groups) if burst else (j // per_group, j % per_group)
        service, instance = f"svc{g:04d}", f"i{i}"
        found.append(
            {
                "labels": {"alertname": "LatencyHigh", "service": service, "instance": instance},
                "annotations": {"summary": f"p99 latency high on {service}/{instance}"},
                "ends_at": until.isoformat(),
            }
        )
    return found


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alerts", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--group-wait", type=int, default=30)
    parser.add_argument("--layout", choices=("steady", "burst"), default="steady")
    args = parser.parse_args()
    per_group = args.alerts // args.groups
    batches = args.alerts // BATCH

    admin, name, url = await scratch_database("routing")
    proc = None
    receiver = Receiver()
    try:
        hook_url = await receiver.start()
        proc, token, port = start_beacon(url, name)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            await wait_ready(http, base)
            notifier = await webhook_notifier(http, base, hook_url)
            version = (await http.get(f"{base}/v1/routing")).json()["version"]
            r = await http.put(
                f"{base}/v1/routing",
                headers={"If-Match": version},
                json={
                    "route": {
                        "notifier_ids": [notifier],
                        "group_by": ["alertname", "service"],
                        "group_wait_seconds": args.group_wait,
                        "group_interval_seconds": 300,
                        "repeat_interval_seconds": 14_400,
                    }
                },
            )
            r.raise_for_status()

            until = datetime.now(UTC) + timedelta(hours=1)
            first_post: dict[str, float] = {}
            post_seconds: list[float] = []
            started, cpu_start = time.time(), tree_cpu_seconds(proc.pid)
            for b in range(batches):
                due = started + b * args.seconds / batches
                await asyncio.sleep(max(0.0, due - time.time()))
                body = alerts_for(b * BATCH, BATCH, args.groups, per_group, until, args.layout == "burst")
                t = time.time()
                r = await http.post(f"{base}/v1/alerts", json=body)
                r.raise_for_status()
                post_seconds.append(time.time() - t)
                for alert in body:
                    first_post.setdefault(alert["labels"]["service"], t)
            last_post = time.time()
            print(
                f"posted {args.alerts} alerts in {last_post - started:.1f} s ({batches} requests of {BATCH}); "
                f"POST p50 {pct(post_seconds, 50) * 1000:.0f} ms, p99 {pct(post_seconds, 99) * 1000:.0f} ms"
            )

            def firsts() -> dict[str, list[tuple[float, dict]]]:
                found: dict[str, list[tuple[float, dict]]] = {}
                for arrived, body in receiver.got:
                    if body["data"]["reason"] == "first":
                        found.setdefault(body["data"]["group_labels"]["service"], []).append((arrived, body))
                return found

            deadline = last_post + args.group_wait + 120
            while len(firsts()) < args.groups and time.time() < deadline:  # noqa: ASYNC110 - polls the receiver
                await asyncio.sleep(0.2)
            done = time.time()
            cpu = tree_cpu_seconds(proc.pid) - cpu_start
            await asyncio.sleep(3)  # room for a duplicate to show up, if there were one
        conn = await asyncpg.connect(asyncpg_dsn(url))
        try:
            # Where the overhead goes: formed + group_wait -> flushed (the delivery row written) -> sent.
            rows = await conn.fetch(
                """
                SELECT extract(epoch FROM d.created_at - g.created_at) AS flush,
                       extract(epoch FROM d.last_attempt_at - d.created_at) AS send
                FROM deliveries d JOIN alert_groups g ON g.key = d.alert_group_key
                WHERE d.alert_group_reason = 'first'
                """
            )
        finally:
            await conn.close()
        flush_lag = [float(r["flush"]) - args.group_wait for r in rows]
        send_lag = [float(r["send"]) for r in rows if r["send"] is not None]
        got = firsts()
        lat = [got[g][0][0] - first_post[g] for g in got]
        over = [x - args.group_wait for x in lat]
        sizes = sorted(len(got[g][0][1]["data"]["alerts"]) for g in got)
        dupes = sum(len(v) - 1 for v in got.values())
        last = max(a for v in got.values() for a, _ in v) if got else float("nan")
        print(
            f"first notifications: {len(got)} of {args.groups} groups, duplicates {dupes}, "
            f"alerts per first message: min {sizes[0]}, median {sizes[len(sizes) // 2]}, max {sizes[-1]}"
        )
        print(
            f"group's first post -> first notification received: p50 {pct(lat, 50):.2f} s, p99 {pct(lat, 99):.2f} s, "
            f"max {max(lat):.2f} s against group_wait {args.group_wait} s "
            f"(overhead p50 {pct(over, 50) * 1000:.0f} ms, p99 {pct(over, 99) * 1000:.0f} ms, "
            f"max {max(over) * 1000:.0f} ms)"
        )
        print(
            f"last post -> every first notification received: {last - last_post:.2f} s (group_wait {args.group_wait} s)"
        )
        print(
            f"  of which formed + group_wait -> flushed: p50 {pct(flush_lag, 50) * 1000:.0f} ms, "
            f"p99 {pct(flush_lag, 99) * 1000:.0f} ms; flushed -> sent: p50 {pct(send_lag, 50) * 1000:.0f} ms, "
            f"p99 {pct(send_lag, 99) * 1000:.0f} ms"
        )
        wall = done - started
        print(f"server process CPU from the first post to the last notification: {cpu:.1f} s of {wall:.0f} s "
              f"({cpu / wall * 100:.0f} % of one core)")  # fmt: skip
    finally:
        if receiver.server is not None:
            receiver.server.close()
        await finish(proc, admin, name)


if __name__ == "__main__":
    asyncio.run(main())

"""Benchmark: fan-out. 1,000 alerts posted at once (one `POST /api/v2/alerts`) into 1,000 groups with
`group_wait: 0` (`group_by: [alertname, n]`), all to one local webhook receiver: from the POST to the last
notification received, through one `beacon serve`, and through one Alertmanager 0.25 (the baseline, in the
same run, same receiver, same alerts).

Issue 26's goal: Beacon under 1.5 s (Alertmanager: 0.64 s when the issue was filed). Needs
/usr/bin/prometheus-alertmanager (Debian's package) and a PostgreSQL server. Run from the repository root:
    .venv/bin/python bench/fanout.py [--alerts 1000] [--rounds 3]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
import httpx

from app.settings import asyncpg_dsn
from bench.monitors import Receiver
from bench.serve import finish, free_port, scratch_database, start_beacon, wait_ready, webhook_notifier

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"


def alerts(n: int, round_: int) -> list[dict]:
    return [{"labels": {"alertname": f"Fanout{round_}", "n": f"{i:05d}"}} for i in range(n)]


started_at: list[float] = []  # when each round's POST was sent


async def until_received(receiver: Receiver, count: int, since: int) -> float:
    """When the `count`-th notification since `since` arrived (Unix time)."""
    deadline = time.monotonic() + 60
    while sum(len(b.get("alerts", [])) or 1 for _, b in receiver.got[since:]) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(receiver.got) - since} of {count} notifications arrived")
        await asyncio.sleep(0.01)
    return max(t for t, _ in receiver.got[since:])


async def one_round(http: httpx.AsyncClient, url: str, receiver: Receiver, n: int, r: int) -> tuple[float, float]:
    """(POST answered, all received), seconds after the POST was sent."""
    since = len(receiver.got)
    started = time.time()
    started_at.append(started)
    resp = await http.post(url, json=[{**a, "annotations": {}} for a in alerts(n, r)])
    assert resp.status_code == 200, resp.text
    answered = time.time() - started
    return answered, await until_received(receiver, n, since) - started


async def beacon_side(args: argparse.Namespace, hook: str, receiver: Receiver) -> list[float]:
    admin, name, url = await scratch_database("fanout")
    proc = None
    db = await asyncpg.connect(asyncpg_dsn(url))
    try:
        extra = {"BEACON_DELIVERY_PER_DESTINATION": str(args.per_destination)} if args.per_destination else None
        proc, token, port = start_beacon(url, name, extra_env=extra)
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=60, headers=headers) as http:
            await wait_ready(http, base)
            notifier = await webhook_notifier(http, base, hook)
            current = (await http.get(f"{base}/v1/routing")).json()
            route = {"notifier_ids": [notifier], "group_by": ["alertname", "n"], "group_wait_seconds": 0}
            r = await http.put(f"{base}/v1/routing", headers={"If-Match": current["version"]}, json={"route": route})
            assert r.status_code == 200, r.text
            found = []
            for i in range(args.rounds):
                answered, received = await one_round(http, f"{base}/api/v2/alerts", receiver, args.alerts, i)
                queued = await db.fetchval(
                    "SELECT extract(epoch FROM max(created_at) - $1::timestamptz) FROM deliveries",
                    datetime.fromtimestamp(started_at[-1], UTC),
                )
                print(f"  beacon round {i}: POST answered {answered:.2f} s, last delivery written {queued:.2f} s")
                found.append(received)
            return found
    finally:
        await db.close()
        await finish(proc, admin, name)


async def alertmanager_side(args: argparse.Namespace, hook: str, receiver: Receiver) -> list[float]:
    with tempfile.TemporaryDirectory() as work:
        config = Path(work) / "alertmanager.yml"
        config.write_text(
            "route: {receiver: hook, group_by: [alertname, n], group_wait: 0s, group_interval: 5m}\n"
            f"receivers: [{{name: hook, webhook_configs: [{{url: '{hook}'}}]}}]\n"
        )
        port = free_port()
        proc = subprocess.Popen(  # noqa: ASYNC220 (started once, before anything is measured)
            [ALERTMANAGER, f"--config.file={config}", f"--storage.path={work}/data",
             f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                for _ in range(200):
                    try:
                        if (await http.get(f"http://127.0.0.1:{port}/-/ready")).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    await asyncio.sleep(0.05)
                base = f"http://127.0.0.1:{port}/api/v2/alerts"
                return [(await one_round(http, base, receiver, args.alerts, i))[1] for i in range(args.rounds)]
        finally:
            proc.terminate()
            proc.wait()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alerts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-destination", type=int, help="BEACON_DELIVERY_PER_DESTINATION (default: Beacon's)")
    args = parser.parse_args()
    receiver = Receiver()
    hook = await receiver.start()
    print(f"load average {os.getloadavg()[0]:.1f}")
    am = await alertmanager_side(args, hook, receiver)
    beacon = await beacon_side(args, hook, receiver)
    print(f"load average {os.getloadavg()[0]:.1f}")
    for side, times in (("alertmanager", am), ("beacon", beacon)):
        rounds = ", ".join(f"{t:.2f}" for t in times)
        what = f"{args.alerts} alerts into {args.alerts} groups, all received"
        print(f"{side:>12}: {what}: median {statistics.median(times):.2f} s ({rounds})")
    print(f"ratio beacon / alertmanager (median): {statistics.median(beacon) / statistics.median(am):.2f}")


if __name__ == "__main__":
    asyncio.run(main())

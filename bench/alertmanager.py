"""Benchmark: the same Prometheus rules routed once through Alertmanager 0.25 and once through Beacon, to the same
local webhook receiver, with the same `group_wait`.

For each side, two instances, as each is run for high availability: two Alertmanagers in a gossip cluster
(`--cluster.peer`), or two `beacon serve` processes on one database. Prometheus 2.42 sends every alert to both
(as Prometheus is told to with an HA pair). 50 alerting rules (`vector(1) > 0`, label `n` = 00..49, one
evaluation a second) fire at once; `group_by: [alertname, n]`, so each alert is its own group and its own
notification. With `--rounds R`, R such bursts, `--spacing` seconds apart, each of its own rules (alertname
`BenchFiring<r>`): one run then gives R figures of the same burst (a single burst's p50 varies by ±10–20 ms from run
to run on 2 cores). Reports, per side:
- rule firing (the alert's `activeAt` in Prometheus) -> its first notification received: p50 / p99 / max,
  against `group_wait` (the baseline: everything above it is the router's and Prometheus' overhead); with rounds,
  also each round's p50 and their median;
- notifications received per alert over the observation window: anything over one is a duplicate.

The rules fire at a set time (`vector(time()) > T`), once Prometheus has discovered both receivers, so no alert
is lost to its start-up; Prometheus' resend delay is its default (1 minute). Needs /usr/bin/prometheus,
/usr/bin/prometheus-alertmanager (Debian's packages) and a PostgreSQL server. Run from the repository root:
    .venv/bin/python bench/alertmanager.py [--alerts 50] [--group-wait 5] [--observe 25] [--rounds 1]
with BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
import httpx

from app.settings import asyncpg_dsn
from bench.monitors import Receiver, pct
from bench.serve import BEACON, finish, free_port, scratch_database, start_beacon, wait_ready, webhook_notifier

PROMETHEUS = "/usr/bin/prometheus"
ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
# The rules fire this long after Prometheus starts: by then it has discovered the receivers (alerts it sends
# before are dropped, and a reload starts discovery again, so the rules are not switched on by a reload).
LEAD_SECONDS = 15


def rules(n: int, fire_at: float, rounds: int = 1, spacing: float = 0) -> str:
    """n rules per round that start firing at `fire_at` (Unix time) + the round's `spacing`s, one label `n` each;
    round r's alert is `BenchFiring` + r (from the second round on)."""
    lines = ["groups:", "- name: bench", "  interval: 1s", "  rules:"]
    for r in range(rounds):
        for i in range(n):
            lines += [
                f"  - alert: {alert_name(r)}",
                f"    expr: vector(time()) > {fire_at + r * spacing:.0f}",
                f"    labels: {{n: '{i:02d}'}}",
            ]
    return "\n".join(lines) + "\n"


def alert_name(r: int) -> str:
    return "BenchFiring" + (str(r) if r else "")


def key(labels: dict[str, str]) -> str:
    """An alert's key in the results: its name and `n`."""
    return f"{labels.get('alertname')}/{labels['n']}"


def prometheus_config(targets: list[str], token: str | None) -> str:
    auth = f"    authorization: {{type: Bearer, credentials: {token}}}\n" if token else ""
    listed = ", ".join(f"'{t}'" for t in targets)
    return (
        "global: {evaluation_interval: 1s}\nrule_files: [rules.yml]\nalerting:\n  alertmanagers:\n"
        f"  - api_version: v2\n{auth}    static_configs: [{{targets: [{listed}]}}]\n"
    )


def quiet(args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)  # type: ignore[call-overload]


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def firing_keys(body: dict) -> list[str]:
    """The key of each firing alert a notification lists (Alertmanager's webhook body, or Beacon's)."""
    alerts = body.get("alerts") or body.get("data", {}).get("alerts") or []
    return [key(a["labels"]) for a in alerts if a.get("status") == "firing" and "n" in a.get("labels", {})]


async def run_prometheus(
    work: Path, targets: list[str], token: str | None, receiver: Receiver, args: argparse.Namespace
) -> dict[str, Any]:
    """Start Prometheus at the targets, fire the rules once it sees them, and measure what the receiver gets."""
    n, observe, resend, rounds, spacing = args.alerts, args.observe, args.resend_delay, args.rounds, args.spacing
    (work / "prometheus.yml").write_text(prometheus_config(targets, token))
    fire_at = time.time() + LEAD_SECONDS
    (work / "rules.yml").write_text(rules(n, fire_at, rounds, spacing))
    port = free_port()
    prom = quiet(
        [PROMETHEUS, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}", f"--rules.alert.resend-delay={resend}"],
        cwd=work,
    )  # fmt: skip
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            for _ in range(300):
                try:
                    found = (await http.get(f"{api}/alertmanagers")).json()["data"]["activeAlertmanagers"]
                    if len(found) == len(targets):
                        break
                except (httpx.HTTPError, KeyError, ValueError):  # not ready yet
                    pass
                await asyncio.sleep(0.2)
            else:
                raise SystemExit("Prometheus did not discover its Alertmanagers")
            if time.time() > fire_at - 2:
                raise SystemExit("Prometheus took too long to discover its Alertmanagers; raise LEAD_SECONDS")
            receiver.got.clear()
            active: dict[str, float] = {}
            deadline = time.monotonic() + 60 + rounds * spacing
            while len(active) < n * rounds and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                try:
                    found = (await http.get(f"{api}/alerts")).json()["data"]["alerts"]
                except (httpx.HTTPError, ValueError):  # a busy machine: ask again
                    continue
                for a in found:
                    if a["state"] == "firing":
                        active[key(a["labels"])] = datetime.fromisoformat(a["activeAt"]).timestamp()
            await asyncio.sleep(observe)  # the notifications, and any duplicate, arrive meanwhile
    finally:
        stop([prom])
    first: dict[str, float] = {}
    counts: Counter[str] = Counter()
    for arrived, body in receiver.got:
        for name in firing_keys(body):
            counts[name] += 1
            first.setdefault(name, arrived)
    latencies = [(first[k] - active[k]) * 1000 for k in active if k in first]
    per_round = [
        pct([(first[k] - active[k]) * 1000 for k in active if k in first and k.startswith(alert_name(r) + "/")], 50)
        for r in range(rounds)
    ]
    return {
        "alerts": len(active),
        "notified": len(first),
        "p50": pct(latencies, 50),
        "p99": pct(latencies, 99),
        "max": max(latencies, default=float("nan")),
        "duplicates": sum(c - 1 for c in counts.values()),
        "rounds_p50": [round(p, 1) for p in per_round],
        "active": active,
    }


async def alertmanagers(
    work: Path, hook: str, group_wait: int, receiver: Receiver, args: argparse.Namespace, *, gossip_cut: bool = False
) -> dict:
    """Two Alertmanagers in one gossip cluster; `gossip_cut`: the two cannot reach each other (a partition
    between them: each is a cluster of one, as when their gossip port is blocked)."""
    config = work / "alertmanager.yml"
    config.write_text(
        f"route:\n  receiver: hook\n  group_by: [alertname, n]\n  group_wait: {group_wait}s\n"
        "  group_interval: 5m\n  repeat_interval: 4h\n"
        f"receivers:\n- name: hook\n  webhook_configs:\n  - url: '{hook}'\n    send_resolved: true\n"
    )
    web = [free_port() for _ in range(2)]
    gossip = [free_port() for _ in range(2)]
    procs = [
        quiet([ALERTMANAGER, f"--config.file={config}", f"--storage.path={work / f'am{i}'}",
               f"--web.listen-address=127.0.0.1:{web[i]}", f"--cluster.listen-address=127.0.0.1:{gossip[i]}",
               f"--cluster.advertise-address=127.0.0.1:{gossip[i]}",
               *([] if gossip_cut else [f"--cluster.peer=127.0.0.1:{gossip[1 - i]}"])])
        for i in range(2)
    ]  # fmt: skip
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            for port in web:  # ready, and the cluster formed
                for _ in range(300):
                    try:
                        status = (await http.get(f"http://127.0.0.1:{port}/api/v2/status")).json()
                        peers = 1 if gossip_cut else 2
                        if status["cluster"]["status"] == "ready" and len(status["cluster"]["peers"]) == peers:
                            break
                    except (httpx.HTTPError, KeyError, ValueError):
                        pass
                    await asyncio.sleep(0.2)
        targets = [f"127.0.0.1:{p}" for p in web]
        return await run_prometheus(work / "prom", targets, None, receiver, args)
    finally:
        stop(procs)


def second_beacon(url: str, name: str, extra_env: dict[str, str]) -> tuple[subprocess.Popen[str], int]:
    """Another `beacon serve` on the same database (no first-start token to wait for)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    env.update(BEACON_DATABASE_URL=url, BEACON_SECRET_KEY="bench-secret", BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
               BEACON_DATA_DIR=f"/tmp/{name}-2", BEACON_LOG_LEVEL="warning", **extra_env)  # fmt: skip
    proc = subprocess.Popen([BEACON, "serve", "--port", str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    return proc, port


async def beacons(work: Path, hook: str, group_wait: int, receiver: Receiver, args: argparse.Namespace) -> dict:
    admin, name, url = await scratch_database("alertmanager")
    procs: list[subprocess.Popen] = []
    try:
        extra = dict(kv.split("=", 1) for kv in args.beacon_env)
        first, token, port1 = start_beacon(url, name, extra)
        procs.append(first)
        other, port2 = second_beacon(url, name, extra)
        procs.append(other)
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            for port in (port1, port2):
                await wait_ready(http, f"http://127.0.0.1:{port}")
            base = f"http://127.0.0.1:{port1}"
            notifier = await webhook_notifier(http, base, hook)
            version = (await http.get(f"{base}/v1/routing")).json()["version"]
            route = {"notifier_ids": [notifier], "group_by": ["alertname", "n"], "group_wait_seconds": group_wait,
                     "group_interval_seconds": 300, "repeat_interval_seconds": 14_400}  # fmt: skip
            r = await http.put(f"{base}/v1/routing", headers={"If-Match": version}, json={"route": route})
            r.raise_for_status()
        targets = [f"127.0.0.1:{p}" for p in (port1, port2)]
        result = await run_prometheus(work / "prom", targets, token, receiver, args)
        result["phases"] = await phases(url, result["active"])
        return result
    finally:
        stop(procs)
        await finish(None, admin, name)


async def phases(url: str, active: dict[str, float]) -> str:
    """Where Beacon's time goes, from its database: rule firing -> the group formed (the alert's first post),
    formed -> flushed (group_wait), flushed -> the notification sent (the delivery worker); p50 / p99 in ms."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        rows = await conn.fetch(
            "SELECT g.labels::text AS labels, g.created_at, d.created_at AS flushed, d.last_attempt_at AS sent "
            "FROM alert_groups g JOIN deliveries d ON d.alert_group_key = g.key AND d.alert_group_reason = 'first'"
        )
    finally:
        await conn.close()
    parts: dict[str, list[float]] = {"firing->formed": [], "formed->flushed": [], "flushed->sent": []}
    for r in rows:
        name = key(json.loads(r["labels"]))
        if name not in active or r["sent"] is None:
            continue
        parts["firing->formed"].append((r["created_at"].timestamp() - active[name]) * 1000)
        parts["formed->flushed"].append((r["flushed"] - r["created_at"]).total_seconds() * 1000)
        parts["flushed->sent"].append((r["sent"] - r["flushed"]).total_seconds() * 1000)
    return ", ".join(f"{k} {pct(v, 50):.0f} / {pct(v, 99):.0f}" for k, v in parts.items())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alerts", type=int, default=50)
    parser.add_argument("--group-wait", type=int, default=5)
    parser.add_argument("--resend-delay", default="1m", help="Prometheus' --rules.alert.resend-delay")
    parser.add_argument("--gossip-cut", action="store_true", help="also: two Alertmanagers that cannot gossip")
    parser.add_argument("--only", choices=("alertmanager", "beacon"), help="run one side")
    parser.add_argument("--beacon-env", action="append", default=[], metavar="BEACON_X=V",
                        help="a setting for both Beacon processes (repeatable)")  # fmt: skip
    parser.add_argument("--observe", type=float, default=25, help="seconds to watch for duplicates after firing")
    parser.add_argument("--rounds", type=int, default=1, help="bursts of --alerts rules, each firing once")
    parser.add_argument("--spacing", type=float, default=10, help="seconds between the rounds' firing")
    args = parser.parse_args()
    for binary in (PROMETHEUS, ALERTMANAGER):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is missing: apt-get install prometheus prometheus-alertmanager")
    receiver = Receiver()
    hook = await receiver.start()
    work = Path(tempfile.mkdtemp(prefix="bench-am-"))
    results: dict[str, dict] = {}
    sides: dict[str, Callable] = {
        "Alertmanager 0.25 x2 (gossip cluster)": alertmanagers,
        "Beacon x2 (one database)": beacons,
    }
    if args.gossip_cut:
        sides["Alertmanager 0.25 x2, gossip cut"] = functools.partial(alertmanagers, gossip_cut=True)
    if args.only:
        sides = {k: v for k, v in sides.items() if k.lower().startswith(args.only)}
    try:
        for n, (side, run) in enumerate(sides.items()):
            own = work / f"side{n}"  # its own state: an Alertmanager's notification log would remember a run
            (own / "prom").mkdir(parents=True)
            results[side] = await run(own, hook, args.group_wait, receiver, args)
            print(f"{side}: " + ", ".join(f"{k}={v}" for k, v in results[side].items() if k != "active"), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\n{args.alerts} alerts x {args.rounds} round(s), group_wait {args.group_wait} s (the baseline), observed "
        f"{args.observe} s after the last firing"
    )
    print("| router | notified | rule firing -> notification p50 / p99 / max | over group_wait p50 | duplicates |")
    print("|---|---|---|---|---|")
    for side, r in results.items():
        over = r["p50"] - args.group_wait * 1000
        print(f"| {side} | {r['notified']} of {r['alerts']} | {r['p50']:.0f} / {r['p99']:.0f} / {r['max']:.0f} ms "
              f"| {over:.0f} ms | {r['duplicates']} |")  # fmt: skip
    if args.rounds > 1:
        for side, r in results.items():
            overs = [p - args.group_wait * 1000 for p in r["rounds_p50"]]
            print(f"{side}: over group_wait p50 per round {' / '.join(f'{o:.0f}' for o in overs)} ms, "
                  f"median {statistics.median(overs):.0f} ms")  # fmt: skip
    am, bc = results.get("Alertmanager 0.25 x2 (gossip cluster)"), results.get("Beacon x2 (one database)")
    if am and bc:
        print(f"ratio Beacon / Alertmanager, p50: {bc['p50'] / am['p50']:.2f}, p99: {bc['p99'] / am['p99']:.2f}")


if __name__ == "__main__":
    asyncio.run(main())

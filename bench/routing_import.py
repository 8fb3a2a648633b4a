"""Benchmark: importing a large Alertmanager configuration (`POST /v1/routing/import`).

The configuration: N receivers with one webhook each (N notifiers, the most an import makes is 1,000) and one
route per receiver, a few inhibit rules. Reports, in one run:
- baseline: PyYAML's C loader reading the text, the least any import must do (CPU time);
- reading it into notifiers, document and losses (`read_config`, in process, CPU time);
- the import through `beacon serve` on a scratch database: the first (every notifier created, the document
  written) and the second (nothing changes), wall time of the request and the server's CPU time.
Each figure with its ratio to the baseline. Needs a PostgreSQL server (BEACON_BENCH_DATABASE_URL, default
postgresql://postgres@127.0.0.1:5432/postgres). From the repository root:
    .venv/bin/python bench/routing_import.py [--receivers 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import yaml

from app.routing.importing.draft import read_config
from app.routing.importing.yamltext import load
from bench.serve import finish, scratch_database, start_beacon, tree_cpu_seconds, wait_ready


def configuration(receivers: int) -> str:
    lines = ["route:", "  receiver: r0", "  group_by: [alertname]", "  routes:"]
    for i in range(receivers):
        lines += [f"  - matchers: ['team=\"t{i}\"', 'severity=~\"critical|page\"']", f"    receiver: r{i}"]
    lines += ["inhibit_rules:"]
    for i in range(10):
        lines += [f"- source_matchers: [severity=critical, team=t{i}]", "  target_matchers: [severity=warning]"]
        lines += ["  equal: [cluster, service]"]
    lines += ["receivers:"]
    for i in range(receivers):
        lines += [f"- name: r{i}", f"  webhook_configs: [{{url: 'http://127.0.0.1:9/hook/{i}', max_alerts: 10}}]"]
    return "\n".join(lines) + "\n"


def median_ms(run: Callable[[], object], rounds: int) -> float:
    """CPU milliseconds (the machine is shared: wall time says more about the neighbours)."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


async def served(text: bytes) -> tuple[float, float, float, float]:
    admin, name, url = await scratch_database("import")
    proc = None
    try:
        proc, token, port = start_beacon(url, name)
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/yaml"}
        async with httpx.AsyncClient(timeout=300, headers=headers) as http:
            await wait_ready(http, base)
            figures = []
            for _ in range(2):  # the first creates everything, the second finds it all unchanged
                cpu, start = tree_cpu_seconds(proc.pid), time.perf_counter()
                r = await http.post(f"{base}/v1/routing/import", content=text)
                r.raise_for_status()
                figures += [(time.perf_counter() - start) * 1000, (tree_cpu_seconds(proc.pid) - cpu) * 1000]
        return figures[0], figures[1], figures[2], figures[3]
    finally:
        await finish(proc, admin, name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receivers", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    text = configuration(args.receivers).encode()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    base = median_ms(lambda: yaml.load(text, Loader=loader), args.rounds)
    reading = median_ms(lambda: read_config(load(text)), args.rounds)
    first_wall, first_cpu, second_wall, second_cpu = asyncio.run(served(text))
    print(f"configuration: {args.receivers} receivers and routes, {len(text):,} bytes")
    print(f"{'measure':46} {'ms':>9} {'/ baseline':>10}")
    for label, value in (
        ("baseline: the YAML read by PyYAML", base),
        ("read_config (notifiers, document, losses)", reading),
        ("first import, wall (everything created)", first_wall),
        ("first import, server CPU", first_cpu),
        ("second import, wall (nothing changes)", second_wall),
        ("second import, server CPU", second_cpu),
    ):
        print(f"{label:46} {value:9.0f} {value / base:10.1f}")


if __name__ == "__main__":
    main()

"""Benchmark: the change lookup of one notification (app/annotations/changes.py `related_changes`, what a routed
group's flush and a monitor's own message call), with 1,000 annotations in the notification's window and 10,000
in its dataset.

    .venv/bin/python bench/changes.py [--in-window 1000] [--in-dataset 10000] [--runs 300]

A scratch database (migrated) gets `--in-dataset` annotations on the dataset `web` over the last 30 days, of which
`--in-window` fall in the hour before the alerts started, half of them with labels (`service`, `env`, `version`),
plus as many on other datasets, environment-wide ones and monitor state-change markers (which never count).
Timed on one asyncpg connection, `--runs` times each, interleaved:
- a group of 20 alerts of `web` (labels `alertname`, `dataset`, `service`, `instance`): the flush's lookup;
- one alert (a monitor's own message, as a token limited to `web` may read it);
- a group of 200 alerts;
- a notification with nothing in its window (another dataset, labels nobody uses);
- a page of 200 groups in one statement (`related_changes_many`, what `/v1/alerts/groups` runs);
- the baseline: one annotation read by primary key on the same connection (a round trip).
Prints medians and 95th percentiles in ms and each one's ratio to the baseline, then PostgreSQL's own execution
time of the lookup statement (EXPLAIN ANALYZE, median): on a loaded machine the client's wall time is mostly
waiting for a core. Goal: < 5 ms per notification.
Needs a PostgreSQL server: BEACON_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
import msgspec

from app.annotations import changes as lookup
from app.annotations.changes import Concerned, Wanted, related_changes, related_changes_many
from app.settings import asyncpg_dsn
from bench.serve import scratch_database

SERVICES = [f"svc{i:02d}" for i in range(40)]


def rows(args: argparse.Namespace, start: datetime) -> list[tuple]:
    """(id, type, title, datasets, time, end_time, labels, origin) for every annotation."""
    rng = random.Random(7)
    found: list[tuple] = []

    def add(datasets: list[str], t: datetime, labelled: bool, origin: str = "api", span: bool = False) -> None:
        labels = (
            {"service": rng.choice(SERVICES), "env": rng.choice(["prod", "staging"]), "version": f"1.{len(found)}"}
            if labelled
            else {}
        )
        end = t + timedelta(minutes=rng.randint(1, 30)) if span else None
        n = len(found)
        found.append(
            (f"ann_{n:024x}", "deploy", f"deploy {n}", datasets, t, end, msgspec.json.encode(labels).decode(), origin)
        )

    window_start = start - timedelta(hours=1)
    for i in range(args.in_window):  # in the hour before the alerts started
        add(["web"], window_start + timedelta(seconds=rng.uniform(0, 3600)), i % 2 == 0, span=i % 10 == 0)
    for i in range(args.in_dataset - args.in_window):  # the rest of the month
        add(["web"], start - timedelta(days=rng.uniform(0.05, 30)), i % 2 == 0, span=i % 10 == 0)
    for i in range(args.in_dataset):  # other datasets, the same month (some in the window)
        add([f"ds{i % 50}"], start - timedelta(days=rng.uniform(0, 30)), i % 2 == 0)
    for _ in range(args.in_dataset // 10):  # environment-wide, labelled
        add([], start - timedelta(days=rng.uniform(0, 30)), True)
    for _ in range(args.in_dataset):  # monitor markers on web, never a change
        add(["web"], start - timedelta(days=rng.uniform(0, 30)), False, origin="monitor")
    return found


def group(n: int, start: datetime, dataset: str = "web", service: str | None = None) -> list[Concerned]:
    return [
        Concerned(
            {"alertname": "HighErrors", "dataset": dataset, "service": service or SERVICES[i % 5], "instance": f"i{i}"},
            start,
        )
        for i in range(n)
    ]


async def timed(runs: int, work: Callable[[], Awaitable[object]]) -> list[float]:
    found = []
    for _ in range(runs):
        began = time.perf_counter()
        await work()
        found.append((time.perf_counter() - began) * 1000)
    return found


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--in-window", type=int, default=1_000)
    parser.add_argument("--in-dataset", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    admin, name, url = await scratch_database("changes")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    now = start + timedelta(minutes=5)
    try:
        conn = await asyncpg.connect(asyncpg_dsn(url))
        found = rows(args, start)
        await conn.copy_records_to_table(
            "annotations",
            records=[(*r[:6], r[6], r[7], start, start) for r in found],
            columns=[
                "id",
                "type",
                "title",
                "datasets",
                "time",
                "end_time",
                "labels",
                "origin",
                "created_at",
                "updated_at",
            ],
        )
        await conn.execute("ANALYZE annotations")
        print(
            f"{len(found):,} annotations: {args.in_dataset:,} on web ({args.in_window:,} in the window), "
            f"{args.in_dataset:,} on 50 other datasets, {args.in_dataset // 10:,} environment-wide, "
            f"{args.in_dataset:,} monitor markers"
        )

        cases: dict[str, Callable[[], Awaitable[object]]] = {
            "group of 20 alerts": lambda: related_changes(
                conn, group(20, start), now=now, window_seconds=3600, audience=None
            ),
            "one alert, audience web": lambda: related_changes(
                conn, group(1, start), now=now, window_seconds=3600, audience=("web",)
            ),
            "group of 200 alerts": lambda: related_changes(
                conn, group(200, start), now=now, window_seconds=3600, audience=None
            ),
            "nothing in its window": lambda: related_changes(
                conn, group(20, start, "quiet", "nobody"), now=now, window_seconds=3600, audience=None
            ),
            "200 groups of 20 (one statement)": lambda: related_changes_many(
                conn, [Wanted(group(20, start, service=SERVICES[g % 40]), 3600, None) for g in range(200)], now=now
            ),
            "baseline: one annotation by id": lambda: conn.fetchrow(
                "SELECT * FROM annotations WHERE id = $1", found[len(found) // 2][0]
            ),
        }
        sample = await related_changes(conn, group(20, start), now=now, window_seconds=3600, audience=None)
        print(
            f"a group of 20 gets {len(sample.listed)} listed + {sample.more} more; first: "
            f"{sample.listed[0].title!r}, {sample.listed[0].when}, matched {sample.listed[0].why}"
        )
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):  # interleaved, so the machine's load falls on every case alike
            for label, work in cases.items():
                times[label] += await timed(1, work)
        base = statistics.median(times["baseline: one annotation by id"])
        print(f"\n{'case':40} {'median ms':>10} {'p95 ms':>8} {'ratio':>7}")
        for label, values in times.items():
            values.sort()
            median = statistics.median(values)
            p95 = values[int(len(values) * 0.95) - 1]
            print(f"{label:40} {median:10.2f} {p95:8.2f} {median / base:7.1f}")
        print("\nPostgreSQL's execution time of the lookup statement (EXPLAIN ANALYZE), median of 50:")
        for label, requests in (
            ("group of 20 alerts", [group(20, start)]),
            ("group of 200 alerts", [group(200, start)]),
            ("nothing in its window", [group(20, start, "quiet", "nobody")]),
            ("200 groups of 20", [group(20, start, service=SERVICES[g % 40]) for g in range(200)]),
        ):
            ms = []
            for _ in range(50):
                plan = await conn.fetch(
                    "EXPLAIN (ANALYZE, FORMAT JSON) " + lookup._QUERY,
                    list(range(len(requests))),
                    [start - timedelta(hours=1)] * len(requests),
                    [lookup._datasets_json(r) for r in requests],
                    [lookup._label_sets(r) for r in requests],
                    now,
                    None,
                )
                ms.append(msgspec.json.decode(plan[0][0])[0]["Execution Time"])
            print(f"{label:40} {statistics.median(ms):10.2f}")
        await conn.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())

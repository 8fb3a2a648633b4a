"""The ingest hot loop (app/ingest/rows.py) alone, against its version at another git revision.

    .venv/bin/python bench/ingest_rows.py [--against main] [--events 100000] [--rounds 8]

Feeds the same NDJSON lines to both RowBuilders (events with `_time`, and events without it, which are stamped
with the arrival time), in 10,000-line chunks, alternating the two versions round by round, and prints the best
of each as events per CPU second (process time: the machine is shared, and wall time swings with its load)
and their ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.ingest.timestamps import make_reader  # noqa: E402


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(module: ModuleType, lines: list[bytes]) -> float:
    builder = module.RowBuilder(
        dataset_id=1,
        arrival_us=1_795_248_930_000_000,
        timestamp_field="_time",
        read_time=make_reader(None, datetime.now(UTC)),
        max_event_bytes=1 << 20,
    )
    started = time.process_time()
    for i in range(0, len(lines), 10_000):
        builder.add_lines(lines[i : i + 10_000], may_hold_nul=False)
        builder.take_chunk()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", default="main")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    old_source = subprocess.run(
        ["git", "show", f"{args.against}:app/ingest/rows.py"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        old_path = Path(tmp) / "rows_baseline.py"
        old_path.write_bytes(old_source)
        old = _load(old_path, "rows_baseline")
        new = _load(ROOT / "app/ingest/rows.py", "rows_current")
    encode = msgspec.json.encode
    n = args.events
    cases = {
        "with _time": [
            encode({"_time": 1795248930 + i, "service": "api", "http": {"status": 200, "path": "/x"}, "msg": "m" * 40})
            for i in range(n)
        ],
        "without _time (arrival)": [
            encode({"timestamp": "2026-01-01T00:00:00Z", "service": "api", "status": 200, "msg": "m" * 40})
            for _ in range(n)
        ],
    }
    for label, lines in cases.items():
        _run(old, lines), _run(new, lines)  # warm up both
        old_times, new_times = [], []
        for _ in range(args.rounds):
            old_times.append(_run(old, lines))
            new_times.append(_run(new, lines))
        o, c = min(old_times), min(new_times)
        print(
            f"{label}: {args.against} {n / o:,.0f} events/CPU-s, this tree {n / c:,.0f} events/CPU-s, ratio {o / c:.3f}"
        )


if __name__ == "__main__":
    main()

"""What a serving process's one-time work as it starts costs (app/first_use.py: the ORM's mappers, msgspec's decoders,
every adapter's templates compiled), in fresh interpreters: with no compiled templates on disk (the baseline: the
first process after a deploy, or before 2026-12-01) and with the ones the process before it kept. CPU seconds, the
median of --runs each, alternating.

    .venv/bin/python bench/first_use.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import time
from adapters.registry import AdapterRegistry
from app.first_use import prepare_first_use
registry = AdapterRegistry.discover()
started = time.process_time()
prepare_first_use(registry)
print(time.process_time() - started)
"""


def once(tmp: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env={**os.environ, "TMPDIR": tmp}, capture_output=True, text=True
    )
    done.check_returncode()
    return float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as kept:
        once(kept)  # the process before: compiles and keeps them
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as empty:
                cold.append(once(empty))
            warm.append(once(kept))
    before, after = statistics.median(cold), statistics.median(warm)
    print(f"first use, nothing compiled on disk: {before * 1000:.0f} ms CPU (median of {args.runs})")
    print(f"first use, templates kept compiled:  {after * 1000:.0f} ms CPU")
    print(f"after / before: {after / before:.2f}")


if __name__ == "__main__":
    main()

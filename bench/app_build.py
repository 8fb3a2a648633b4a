"""What one `create_app(settings)` costs (the suite builds 726 apps a run, counted), in two set-ups:

- before: the code of a git revision (default e42f3a0: main before the app's parts were built once a process),
  extracted into a temporary directory and imported from there;
- after: this checkout's.

Each round runs one fresh process per set-up (they alternate, so that the machine's load falls on both alike): a
warm-up build, then `--calls` builds timed one by one; the figure is the median of all of a set-up's builds. No
database is touched (the app connects only when it starts).

    .venv/bin/python bench/app_build.py [--rounds 5] [--calls 20] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cli_start import extract, import_path  # noqa: E402

# Run in a child with the tree under test first on the path (checked: `app` must come from it).
CHILD = """
import json, sys, time
root, calls = sys.argv[1], int(sys.argv[2])
import app
assert app.__file__.startswith(root), app.__file__
from pathlib import Path
from app.asgi import create_app
from app.settings import Settings

settings = Settings(database_url="postgresql://postgres@127.0.0.1:9/unused", data_dir=Path("/nonexistent"),
                    base_url="http://testserver.local", secret_key="bench", run_scheduler=False)
create_app(settings)
times = []
for _ in range(calls):
    started = time.perf_counter()
    create_app(settings)
    times.append(time.perf_counter() - started)
print(json.dumps(times))
"""


def builds(tree: Path, calls: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": import_path(tree)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), str(calls)], env=env, capture_output=True, text=True, cwd=tree
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    return [float(t) for t in json.loads(done.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--before", default="e42f3a0")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        old_tree = extract(args.before, Path(scratch), ("app", "adapters", "client"))
        trees = {f"before ({args.before})": old_tree, "after (this checkout)": ROOT}
        times: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                times[name].extend(builds(tree, args.calls))
    before, after = (statistics.median(t) * 1000 for t in times.values())
    for name, t in times.items():
        print(f"{name:28} create_app: median {statistics.median(t) * 1000:6.1f} ms  ({len(t)} builds)")
    print(f"after / before: {after / before:.2f}  (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()

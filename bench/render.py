"""Benchmark: rendering a message (`Adapter.render`, as the delivery worker calls it), every built-in adapter's, for
a monitor's message and a routed group's: CPU per render in a fresh interpreter, a git revision's code and this
checkout's alternating (the baseline is the revision, measured in the same run). Rendering is the largest part of
the delivery worker's CPU per message.

    .venv/bin/python bench/render.py [--before HEAD] [--rounds 5] [--renders 2000]
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ab import trees
from bench.cli_start import import_path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, sys, time
from adapters import testing as kit
from adapters.registry import BUILTIN

renders = int(sys.argv[1])
key = "R0UTINGKEY0000000000000000000abc"
configs = {
    "email": {"addresses": ["ops@example.com"]},
    "incident_a": {"integration_key": key},
    "incident_b": {"integration_key": key},
    "webhook": {"url": "https://public.example/x", "signing_secret": "whsec_" + "A" * 43 + "="},
}
events = {"monitor": kit.sample_events()["triggered"], "group": kit.sample_group_events()["group_firing"]}
found = {}
for cls in BUILTIN:
    adapter = kit.adapter(cls, configs.get(cls.type, {"url": "https://public.example/x"}))
    for name, event in events.items():
        adapter.render(event)  # compiled, outside the measure
        started = time.process_time()
        for _ in range(renders):
            adapter.render(event)
        found[f"{cls.type}, {name}"] = (time.process_time() - started) / renders * 1e6
print(json.dumps(found))
"""


def once(tree: Path | None, renders: int, tmp: str) -> dict[str, float]:
    env = {**os.environ, "TMPDIR": tmp}
    if tree is not None:
        env["PYTHONPATH"] = import_path(tree)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(renders)], cwd=tree or ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="HEAD", help="the baseline: a git revision")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--renders", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as tmp:
        sides = trees(args.before, Path(scratch))
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name, tree in sides.items():
                runs[name].append(once(tree, args.renders, tmp))
    names = sorted(runs["after"][0])
    medians = {side: {n: statistics.median(r[n] for r in found) for n in names} for side, found in runs.items()}
    before, after = medians.values()
    print(f"| adapter, message | {' | '.join(medians)} (µs of CPU per render, median of {args.rounds}) | ratio |")
    print("|---|---|---|---|")
    for n in names:
        print(f"| {n} | {before[n]:.0f} | {after[n]:.0f} | {after[n] / before[n]:.2f} |")
    total_before, total_after = sum(before.values()), sum(after.values())
    print(f"| all, summed | {total_before:.0f} | {total_after:.0f} | **{total_after / total_before:.2f}** |")


if __name__ == "__main__":
    main()

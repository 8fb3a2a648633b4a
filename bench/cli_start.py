"""Start-up time of the `beacon` command: `beacon --help` and `beacon query` (one query answered by a local stub,
so the figure is the command's own cost), before and after the lazy imports, against bare `python -c pass`.

"Before" is the code of a git revision (default: 702fcbc, main before the change), extracted into a temporary
directory; "after" is this checkout. Both run with the same interpreter and PYTHONPATH pointing at their tree,
alternating round by round so that the machine's load falls on both alike.

    .venv/bin/python bench/cli_start.py [--rounds 15] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANSWER = json.dumps(
    {"object": "query_result", "columns": [{"name": "n", "type": "integer"}], "rows": [[42]], "status": {}}
).encode()
# As the `beacon` script does, with the tree under test first on the path (checked: `app` must come from it).
RUN = "import sys, app; assert app.__file__.startswith(sys.argv.pop(1)); from app.cli import main; sys.exit(main())"


class Stub(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args: object) -> None:
        pass


def extract(revision: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "app", "adapters"], capture_output=True)
    archive.check_returncode()
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", default="702fcbc")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"before": extract(args.before, Path(scratch) / "before"), "after": ROOT}
        neutral = Path(scratch) / "cwd"  # `python -c` puts the working directory first on the path: an empty one
        neutral.mkdir()
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
        commands = {"--help": ["--help"], "query": ["query", "['web'] | count", "--url", url, "--token", "t"]}
        times: dict[str, list[float]] = {"python -c pass": []}
        for _ in range(args.rounds):
            times["python -c pass"].append(timed([sys.executable, "-c", "pass"], base_env, neutral))
            for side, tree in trees.items():
                env = {**base_env, "PYTHONPATH": str(tree)}
                for name, command in commands.items():
                    argv = [sys.executable, "-c", RUN, str(tree), *command]
                    times.setdefault(f"beacon {name} ({side})", []).append(timed(argv, env, neutral))
    server.shutdown()

    bare = statistics.median(times["python -c pass"])
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}; median (min) wall time:")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<26} {median * 1000:7.0f} ms ({min(values) * 1000:5.0f})   {median / bare:5.1f}x bare python")
    for name in commands:
        before = statistics.median(times[f"beacon {name} (before)"])
        after = statistics.median(times[f"beacon {name} (after)"])
        print(f"beacon {name}: after/before = {after / before:.2f} (saved {(before - after) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()

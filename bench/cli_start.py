"""Start-up time of the `beacon` command's client commands: `beacon --help`, `beacon query --help`, and
`beacon query` / `beacon alerts` answered by a local stub (so the figure is the command's own cost), against bare
`python -c pass`, in three set-ups:

- before: the code of a git revision (default 7602b87: main before the client moved to client/beacon_client),
  extracted into a temporary directory, its `app.cli` run with PYTHONPATH pointing at it;
- after (Beacon): this checkout's `app.cli` (server and client commands), the same way;
- after (client alone): `pip install ./client` into a fresh venv (tests/packaging/client_venv.py), its own
  `beacon` script run as a user runs it. Its bare `python -c pass` is timed too: a venv with four dependencies
  starts faster than one with Beacon's hundred, whatever it runs.

The set-ups alternate round by round, so that the machine's load falls on all alike.

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
sys.path.insert(0, str(ROOT))

from tests.packaging.client_venv import client_venv  # noqa: E402  (the checkout's tests, after the path)

QUERY = {"object": "query_result", "columns": [{"name": "n", "type": "integer"}], "rows": [[42]], "status": {}}
ALERT = {"fingerprint": "0123456789abcdef", "labels": {"alertname": "DiskFull", "team": "db"}, "state": "firing",
         "starts_at": "2026-01-01T00:00:00Z"}  # fmt: skip
ALERTS = {"object": "list", "data": [ALERT], "has_more": False, "next_cursor": None}
# As the `beacon` script does, with the tree under test first on the path (checked: `app` must come from it).
RUN = "import sys, app; assert app.__file__.startswith(sys.argv.pop(1)); from app.cli import main; sys.exit(main())"


class Stub(BaseHTTPRequestHandler):
    def _answer(self, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(QUERY)

    def do_GET(self) -> None:
        self._answer(ALERTS)

    def log_message(self, *args: object) -> None:
        pass


def import_path(tree: Path) -> str:
    """PYTHONPATH for running a tree's server and its client (the server imports the client's notation)."""
    return os.pathsep.join([str(tree), str(tree / "client")])


def extract(revision: str, into: Path, paths: tuple[str, ...] = ("app", "adapters")) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, *paths], capture_output=True)
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
    parser.add_argument("--before", default="7602b87")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    commands = {
        "--help": ["--help"],
        "query --help": ["query", "--help"],
        "query": ["query", "['web'] | count", "--url", url, "--token", "t"],
        "alerts": ["alerts", "--url", url, "--token", "t"],
    }
    with tempfile.TemporaryDirectory() as scratch:
        # A revision since the client moved to client/ runs its own client (else the checkout's would be imported).
        client = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{args.before}:client"]).returncode == 0
        before = extract(args.before, Path(scratch) / "before", ("app", "adapters", *(("client",) if client else ())))
        alone = client_venv(Path(scratch) / "alone")
        neutral = Path(scratch) / "cwd"  # `python -c` puts the working directory first on the path: an empty one
        neutral.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BEACON_", "PYTHON"))}
        setups = {
            "before": ([sys.executable, "-c", RUN, str(before)], {**env, "PYTHONPATH": import_path(before)}),
            "after, Beacon": (
                [sys.executable, "-c", RUN, str(ROOT)],
                {**env, "PYTHONPATH": import_path(ROOT)},
            ),
            "after, client alone": ([str(alone / "beacon")], env),
        }
        times: dict[str, list[float]] = {}
        bare_pythons = {"python -c pass": sys.executable, "python -c pass, client venv": str(alone / "python")}
        for _ in range(args.rounds):
            for label, python in bare_pythons.items():
                times.setdefault(label, []).append(timed([python, "-c", "pass"], env, neutral))
            for name, command in commands.items():
                for side, (argv, side_env) in setups.items():
                    times.setdefault(f"beacon {name} ({side})", []).append(timed([*argv, *command], side_env, neutral))
    server.shutdown()

    bare = statistics.median(times["python -c pass"])
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}; median (min) wall time:")
    for label, values in times.items():
        median = statistics.median(values)
        print(f"  {label:<42} {median * 1000:7.0f} ms ({min(values) * 1000:5.0f})   {median / bare:5.1f}x bare python")
    for name in commands:
        first = statistics.median(times[f"beacon {name} (before)"])
        for side in list(setups)[1:]:
            then = statistics.median(times[f"beacon {name} ({side})"])
            print(f"beacon {name}, {side}: after/before = {then / first:.2f} (saved {(first - then) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()

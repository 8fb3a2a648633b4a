"""Start-up time of `beacon tokens list`: through the API with a token (answered by a local stub, so the figure
is the command's own cost) against the direct path beside a `.beacon` (its embedded PostgreSQL stopped, as when
no `beacon serve` runs there: the command starts and stops it; and running, as beside a `beacon serve`), with bare
`python -c pass` as the baseline. The rounds alternate, so the machine's load falls on every command alike.

    .venv/bin/python bench/tokens_cli.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BEACON = str(Path(sys.executable).parent / "beacon")
PAGE = json.dumps(
    {
        "object": "list",
        "has_more": False,
        "next_cursor": None,
        "data": [
            {
                "object": "token",
                "id": "tok_0123456789abcdef",
                "name": "admin",
                "scopes": ["*"],
                "datasets": None,
                "created_at": "2026-11-24T10:00:00.000Z",
                "expires_at": None,
                "revoked_at": None,
            }
        ],
    }
).encode()


class Stub(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    with tempfile.TemporaryDirectory() as scratch:
        beside = Path(scratch) / "beside"  # a checkout with its `.beacon`
        anywhere = Path(scratch) / "anywhere"
        beside.mkdir()
        anywhere.mkdir()
        print("making the .beacon (migrations and a first token) …", file=sys.stderr)
        timed([BEACON, "migrate"], base_env, beside)
        timed([BEACON, "tokens", "create", "--name", "admin"], base_env, beside)
        times: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            times.setdefault("python -c pass", []).append(timed([sys.executable, "-c", "pass"], base_env, anywhere))
            api = [BEACON, "tokens", "list", "--url", url, "--token", "bcn_x"]
            times.setdefault("API, from anywhere", []).append(timed(api, base_env, anywhere))
            direct = [BEACON, "tokens", "list"]
            times.setdefault("direct, PostgreSQL stopped", []).append(timed(direct, base_env, beside))
        # Beside a running PostgreSQL (a `beacon serve`'s): held open by this process while the commands run.
        from app.db.embedded import start_embedded, stop_embedded

        start_embedded(beside / ".beacon")
        try:
            for _ in range(args.rounds):
                times.setdefault("direct, PostgreSQL running", []).append(timed(direct, base_env, beside))
        finally:
            stop_embedded(beside / ".beacon")
    server.shutdown()

    bare = statistics.median(times["python -c pass"])
    load = os.getloadavg()[0]
    print(f"{args.rounds} rounds, load average {load:.1f}; median (min) wall time of `beacon tokens list`:")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<28} {median * 1000:7.0f} ms ({min(values) * 1000:5.0f})   {median / bare:5.1f}x bare python")
    api, stopped = (statistics.median(times[k]) for k in ("API, from anywhere", "direct, PostgreSQL stopped"))
    print(f"API / direct (PostgreSQL stopped) = {api / stopped:.2f}")


if __name__ == "__main__":
    main()

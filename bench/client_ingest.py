"""End-to-end ingest through the client against a running `beacon serve` (real HTTP, real PostgreSQL).

Baseline, measured in the same run against the same server: the same events pre-encoded into gzip NDJSON
batches of 10,000 and POSTed back to back with plain httpx — what the server costs with no client work at all.
Then the `Ingester` (encode + compress + send, one batch at a time) and the `beacon ingest` command
(process start, reading and parsing an NDJSON file included).

    BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/<scratch db> \\
        .venv/bin/python bench/client_ingest.py [events]

The database must exist and be empty; the benchmark migrates it and writes four datasets into it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from beacon_client import Client
from beacon_client.batching import BatchBuilder

BEACON = str(Path(sys.executable).parent / "beacon")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_events(n: int) -> list[dict]:
    return [
        {
            "_time": 1_790_000_000 + i // 10,
            "service": ("api", "web", "worker")[i % 3],
            "status": 500 if i % 17 == 0 else 200,
            "duration_ms": (i * 7919) % 1000 / 4,
            "http": {"method": "GET", "path": f"/items/{i % 500}"},
            "message": f"handled request {i}",
        }
        for i in range(n)
    ]


def start(database_url: str, data_dir: str) -> tuple[subprocess.Popen[str], str, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    env.update(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=data_dir, BEACON_RUN_SCHEDULER="false",
               BEACON_LOG_LEVEL="warning")  # fmt: skip
    proc = subprocess.Popen(
        [BEACON, "serve", "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    token = ""
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not token:
        line = proc.stdout.readline()
        if line.strip().startswith("bcn_"):
            token = line.strip()
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return proc, url, token
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("beacon serve did not start (is the database empty?)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    database_url = os.environ["BENCH_DATABASE_URL"]
    events = make_events(n)
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, token = start(database_url, tmp)
        try:
            builder = BatchBuilder()
            bodies = [b.body for b in map(builder.add, events) if b is not None]
            last = builder.seal()
            bodies += [last.body] if last else []
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson",
                       "Content-Encoding": "gzip"}  # fmt: skip
            with httpx.Client(timeout=120) as http:
                # Warm-up: the day partitions and the server's caches exist before anything is timed.
                http.post(f"{url}/v1/ingest/bench-warm", content=bodies[0], headers=headers).raise_for_status()
                t = time.perf_counter()
                for body in bodies:
                    http.post(f"{url}/v1/ingest/bench-raw", content=body, headers=headers).raise_for_status()
                raw_s = time.perf_counter() - t

            with Client(url, token) as client:
                t = time.perf_counter()
                with client.ingester("bench-client") as ing:
                    ing.extend(events)
                client_s = time.perf_counter() - t
                assert ing.totals.ingested == n, ing.totals

            path = Path(tmp) / "events.ndjson"
            path.write_text("".join(json.dumps(e) + "\n" for e in events))
            t = time.perf_counter()
            env = {**os.environ, "BEACON_URL": url, "BEACON_TOKEN": token}
            done = subprocess.run([BEACON, "ingest", str(path), "--dataset", "bench-cli"], env=env,
                                  capture_output=True, text=True)  # fmt: skip
            cli_s = time.perf_counter() - t
            assert done.returncode == 0, done.stderr
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"events: {n:,} in {len(bodies)} batches")
    print(f"baseline: pre-encoded gzip batches POSTed with httpx: {n / raw_s:,.0f} events/s")
    print(f"Ingester (encode + gzip + send):                     {n / client_s:,.0f} events/s")
    print(f"beacon ingest FILE (process start, parse included):   {n / cli_s:,.0f} events/s")
    print(f"ratio Ingester/baseline: {raw_s / client_s:.2f}   beacon ingest/baseline: {raw_s / cli_s:.2f}")


if __name__ == "__main__":
    main()

"""What the benchmarks share: a scratch database, `beacon serve` on it (rate limits out of the way, its
first-start admin token read from its output), a webhook notifier, and the clean-up."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx

from app.db.migrate import upgrade
from app.settings import asyncpg_dsn

BEACON = str(Path(sys.executable).parent / "beacon")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_beacon(
    url: str,
    name: str,
    extra_env: dict[str, str] | None = None,
    token: str | None = None,
    extra_args: tuple[str, ...] = (),
) -> tuple[subprocess.Popen[str], str, int]:
    """Start it (`extra_env`: more BEACON_* settings, `extra_args`: more `beacon serve` options); returns the
    process, the admin token and the port (the caller waits for /readyz). Only the first start on a database
    prints a token: a later one passes `token`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    env.update(
        BEACON_DATABASE_URL=url,
        BEACON_SECRET_KEY="bench-secret",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        BEACON_DATA_DIR=f"/tmp/{name}",
        BEACON_LOG_LEVEL="warning",
        BEACON_RATE_LIMIT_OTHER="100000",
        BEACON_RATE_LIMIT_INGEST="100000",
        BEACON_RATE_LIMIT_READ="100000",
    )
    env.update(extra_env or {})
    proc = subprocess.Popen(
        [BEACON, "serve", "--port", str(port), *extra_args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    while token is None:  # the first start prints an admin token
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("beacon serve exited")
        if line.strip().startswith("bcn_"):
            token = line.strip()
    # Keep reading the server's output, or it blocks once the pipe is full.
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    return proc, token, port


async def scratch_database(prefix: str) -> tuple[asyncpg.Connection, str, str]:
    """A fresh database on BEACON_BENCH_DATABASE_URL's server: (admin connection, name, URL), migrated."""
    server_url = os.environ.get("BEACON_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"beacon_bench_{prefix}_{os.getpid()}"
    admin = await asyncpg.connect(asyncpg_dsn(server_url))
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
    await asyncio.to_thread(upgrade, url)
    return admin, name, url


async def wait_ready(http: httpx.AsyncClient, base: str) -> None:
    for _ in range(300):
        try:
            if (await http.get(f"{base}/readyz")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)


async def webhook_notifier(http: httpx.AsyncClient, base: str, url: str) -> str:
    r = await http.post(f"{base}/v1/notifiers", json={"name": "bench", "type": "webhook", "config": {"url": url}})
    r.raise_for_status()
    return str(r.json()["id"])


async def finish(proc: subprocess.Popen[str] | None, admin: asyncpg.Connection, name: str) -> None:
    """Stop the server, drop the scratch database."""
    if proc is not None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its live descendants (the worker processes of `beacon serve --workers`)."""
    total = cpu_seconds(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return total
    return total + sum(tree_cpu_seconds(int(c)) for c in children)

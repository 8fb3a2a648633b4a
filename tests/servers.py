"""Running Beacon as a user does in tests: the `beacon` command in a subprocess, and free loopback ports."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

BEACON = str(Path(sys.executable).parent / "beacon")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`beacon serve` in a subprocess, its output collected by a thread."""

    def __init__(
        self, env: dict[str, str], port: int, *extra: str, beacon: str = BEACON, cwd: Path | None = None
    ) -> None:
        self.port = port
        self.lines: list[str] = []
        # One process unless the test asks for more (`beacon serve` alone starts one per CPU).
        workers = () if "--workers" in extra else ("--workers", "1")
        self.proc = subprocess.Popen(
            [beacon, "serve", "--port", str(port), *workers, *extra],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def token(self) -> str | None:
        return next((line.strip() for line in self.lines if line.strip().startswith("bcn_")), None)

    def wait_ready(self, timeout: float = 120) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("beacon serve exited:\n" + "\n".join(self.lines))
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError("beacon serve did not become ready:\n" + "\n".join(self.lines))

    def interrupt(self, timeout: float = 30) -> int:
        """Ctrl-C: SIGINT, then wait for the process to finish shutting down; returns its exit status."""
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """`app` behind a real uvicorn server on this event loop; yields its `host:port`."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)

"""Running Beacon as a user does in tests: the `beacon` command in a subprocess, the app behind a real uvicorn in
the test's own process, and free loopback ports."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

import httpx
import uvicorn

from app.gctune import SERVING_THRESHOLDS

BEACON = str(Path(sys.executable).parent / "beacon")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    env.update(extra)
    return env


def poll_ready(url: str, running: Callable[[], None], timeout: float, every: float = 0.2) -> bool:
    """Poll `url` (a readiness endpoint) until it answers 200, calling `running` before each poll (it raises once
    the server has exited); False when `timeout` passed first. One client for all the polls: httpx builds an SSL
    context for each client (~35 ms of CPU), and a poll per `httpx.get` was 8 % of the suite's workers' CPU."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=1) as http:
        while time.monotonic() < deadline:
            running()
            try:
                if http.get(url).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(every)
    return False


def collected(stream: IO[str] | None) -> list[str]:
    """The lines a child process writes to `stream` (a pipe), read in a thread as they come: a pipe nobody reads
    fills up (64 KiB) and stops its writer at its next line. The list grows while the child runs."""
    assert stream is not None
    lines: list[str] = []

    def read() -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    return lines


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving_collector() -> Iterator[None]:
    """The garbage collector as `beacon serve` sets it (app/gctune.py), for a server in the test's process: what
    lived before is left out of its passes, and full passes are as rare. Else a full pass walks the millions of
    objects a worker's earlier tests left (250-650 ms each, measured) and holds this event loop, which a test of
    the server's responsiveness would blame on the server. Undone afterwards: what was frozen can be freed again."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*SERVING_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


@asynccontextmanager
async def served_app(app: Any, options: dict[str, Any] | None = None) -> AsyncIterator[str]:
    """`app` behind a real uvicorn server on this event loop (`options`: uvicorn's, e.g. app.cli.uvicorn_options or
    a certificate: then https), with the collector as a server sets it; yields its base URL. The test client
    buffers whole bodies and has no peer address: this has both."""
    options = options or {}
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options))
    scheme = "https" if options.get("ssl_certfile") else "http"
    with serving_collector():
        task = asyncio.create_task(server.serve())
        for _ in range(200):
            if server.started or task.done():
                break
            await asyncio.sleep(0.05)
        assert server.started
        try:
            yield f"{scheme}://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            await asyncio.wait_for(task, 30)


class Server:
    """`beacon serve` in a subprocess, its output collected by a thread."""

    def __init__(
        self, env: dict[str, str], port: int, *extra: str, beacon: str = BEACON, cwd: Path | None = None
    ) -> None:
        self.port = port
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
        self.lines = collected(self.proc.stdout)

    @property
    def token(self) -> str | None:
        return next((line.strip() for line in self.lines if line.strip().startswith("bcn_")), None)

    def wait_ready(self, timeout: float = 120) -> Server:
        def running() -> None:
            if self.proc.poll() is not None:
                raise AssertionError("beacon serve exited:\n" + "\n".join(self.lines))

        if poll_ready(f"http://127.0.0.1:{self.port}/readyz", running, timeout):
            return self
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


class InThread:
    """An ASGI app under uvicorn in a thread of this process, on a loopback port the system chose: a server that
    outlives one test's event loop (a module's clients share it)."""

    def __init__(self, app: object) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))  # type: ignore[arg-type]
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> InThread:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

"""The Alertmanager-compatible API against its real clients: a real `beacon serve` subprocess on the test's
database, Debian's `prometheus` and `amtool` binaries (installed by .ci/run), and a local webhook receiver
(pytest-httpserver) that keeps what the routing tree sends it."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from werkzeug import Request, Response

from tests.servers import Server, clean_env, free_port


def binary(name: str) -> str:
    found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if found is None:  # a skip fails the run under CI=true, where .ci/run installs it
        pytest.skip(f"{name} is not installed (apt-get install prometheus prometheus-alertmanager)")
    return found


async def wait_for(condition: Callable[[], Awaitable[bool]], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


METRICS_TOKEN = "scrape-secret-0123"  # BEACON_METRICS_TOKEN: /metrics wants it as a bearer token


@dataclass
class Beacon:
    """One `beacon serve`, a token for it, and what the webhook receiver got (each request's `data`)."""

    url: str
    token: str
    http: httpx.AsyncClient
    received: list[dict[str, Any]] = field(default_factory=list)
    metrics_token: str = METRICS_TOKEN

    async def notifier(self, name: str, hook_url: str) -> str:
        r = await self.http.post("/v1/notifiers", json={"name": name, "type": "webhook", "config": {"url": hook_url}})
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    async def put_routing(self, document: dict[str, Any]) -> None:
        current = (await self.http.get("/v1/routing")).json()
        r = await self.http.put("/v1/routing", headers={"If-Match": current["version"]}, json=document)
        assert r.status_code == 200, r.text


@pytest.fixture
async def beacon(database_url: str, tmp_path: Path, httpserver: Any, make_token: Any) -> AsyncIterator[Beacon]:
    token = await make_token(["*"])
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(tmp_path / "data"),
        BEACON_SECRET_KEY="amapi-secret",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        BEACON_ROUTING_TICK_SECONDS="0.2",
        BEACON_DELIVERY_POLL_SECONDS="0.5",
        BEACON_METRICS_TOKEN=METRICS_TOKEN,
    )
    server = Server(env, free_port())
    received: list[dict[str, Any]] = []

    def receive(request: Request) -> Response:
        received.append(json.loads(request.get_data())["data"])
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    try:
        await asyncio.to_thread(server.wait_ready, 120)
        url = f"http://127.0.0.1:{server.port}"
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            yield Beacon(url, token, http, received)
    finally:
        await asyncio.to_thread(server.stop)


@dataclass
class Amtool:
    path: str
    url: str
    http_config: Path

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.path, f"--alertmanager.url={self.url}", f"--http.config.file={self.http_config}", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        # amtool warns on stderr when the server's version is not its own: Beacon reports the API's version.
        assert "Warning" not in done.stderr, done.stderr
        return done


@pytest.fixture
def amtool(beacon: Beacon, tmp_path: Path) -> Amtool:
    config = tmp_path / "amtool-http.yml"
    config.write_text(f"authorization:\n  type: Bearer\n  credentials: {beacon.token}\n")
    return Amtool(binary("amtool"), beacon.url, config)

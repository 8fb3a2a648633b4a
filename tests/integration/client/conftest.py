"""The real app for the client's end-to-end tests: in process (AsyncClient over the ASGI test client) and
as `beacon serve` in a subprocess on a free port (the sync Client and the CLI talk real HTTP to it)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from beacon_client import AsyncClient, Client
from tests.conftest import _with_database
from tests.databases import Clones
from tests.servers import BEACON, Server, clean_env, free_port


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Served:
    url: str
    token: str
    database_url: str
    data_dir: Path

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(**{"BEACON_URL": self.url, "BEACON_TOKEN": self.token, **extra})

    def client(self, **kwargs: object) -> Client:
        return Client(self.url, self.token, **kwargs)  # type: ignore[arg-type]

    def beacon(self, *args: str, input: str | bytes | None = None, **env: str) -> Done:
        """Run the `beacon` command against this server, as a user in a CI job would."""
        done = subprocess.run(
            [BEACON, *args],
            env=self.env(**env),
            input=input.encode() if isinstance(input, str) else input,
            capture_output=True,
            timeout=120,
        )
        return Done(done.returncode, done.stdout.decode(), done.stderr.decode())


@pytest.fixture(scope="module")
def served(pg_server_url: str, clones: Clones, tmp_path_factory) -> Iterator[Served]:
    """One `beacon serve` per test module, on a database of its own from the pool (no token yet: the first start
    prints one)."""
    name = clones.take()
    database_url = _with_database(pg_server_url, name)
    data_dir = tmp_path_factory.mktemp("served")
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(data_dir),
        BEACON_SECRET_KEY="client-tests",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        PATH=os.environ.get("PATH", ""),
    )
    port = free_port()
    server = Server(env, port).wait_ready(120)
    try:
        assert server.token, "\n".join(server.lines)
        yield Served(f"http://127.0.0.1:{port}", server.token, database_url, data_dir)
    finally:
        server.stop()
        clones.give_back(name)


@pytest.fixture
async def beacon(client: AsyncTestClient[Litestar], admin_token: str) -> AsyncIterator[AsyncClient]:
    """The AsyncClient on the in-process app (the test client is its transport)."""
    async with AsyncClient(str(client.base_url), admin_token, http=client) as b:
        yield b

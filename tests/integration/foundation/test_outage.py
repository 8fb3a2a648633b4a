"""A PostgreSQL outage under a running app: every request is a 503 with Retry-After (never a 500), and the app
recovers by itself when the server is back.

The app runs against a PostgreSQL of this test's own (the `pgserver` binaries, as the embedded server), which
the test takes through the states of a real outage: its connections terminated under it, a shutdown in
progress (new connections refused with 57P03 "the database system is shutting down"), the server stopped
(connection refused), and the server started again.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import pgserver
import pytest
from litestar.testing import AsyncTestClient

from app.db.migrate import upgrade
from app.settings import asyncpg_dsn, normalize_database_url
from tests.conftest import _admin, admin_token_in, run_sync
from tests.helpers import assert_error


@dataclass
class OwnPostgres:
    server: pgserver.PostgresServer
    url: str  # the app's database on it
    admin_url: str  # its `postgres` database, for the test's own sessions

    def pg_ctl(self, *args: str) -> None:
        pgserver.pg_ctl(list(args), pgdata=self.server.pgdata, user=self.server.system_user)

    def start(self) -> None:
        self.server.ensure_postgres_running()

    def running(self) -> bool:
        try:
            self.pg_ctl("status")
        except Exception:
            return False
        return True

    def wait_stopped(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.running():
            assert time.monotonic() < deadline, "PostgreSQL did not stop"
            time.sleep(0.1)


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    # A short directory: the server's unix socket lives there, and socket paths are limited to ~100 bytes.
    server = pgserver.get_server(Path(tempfile.mkdtemp(prefix="beacon-outage-")), cleanup_mode="delete")
    try:
        admin = normalize_database_url(server.get_uri("postgres"))
        run_sync(_admin(admin, "CREATE DATABASE beacon"))
        url = normalize_database_url(server.get_uri("beacon"))
        upgrade(url)
        yield OwnPostgres(server, url, admin)
    finally:
        server.cleanup()


_TERMINATE_OTHERS = """
    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
    WHERE datname = 'beacon' AND pid <> pg_backend_pid()
"""


async def _every_kind_of_request(c: AsyncTestClient, auth: dict[str, str]) -> list[httpx.Response]:
    """One request down each path to the database: the token check on the read pool and an ORM session
    (tokens), an ORM write (annotations), ingest (ORM plus asyncpg COPY), and the read pool's query with
    the token checked beside it."""
    return [
        await c.get("/v1/tokens", headers=auth),
        await c.post("/v1/annotations", headers=auth, json={"type": "deploy", "title": "v1", "datasets": ["web"]}),
        await c.post(
            "/v1/ingest/web", headers={**auth, "content-type": "application/x-ndjson"}, content=b'{"status": 200}\n'
        ),
        await c.post("/v1/query", headers=auth, json={"apl": "['web'] | count"}),
    ]


def _assert_unavailable(response: httpx.Response) -> None:
    assert_error(response, 503, "service_unavailable", type_="api_error")
    assert int(response.headers["retry-after"]) >= 1


async def test_a_database_outage_is_503_with_retry_after_and_beacon_recovers(own_postgres, app_client):
    pg = own_postgres
    auth = {"Authorization": f"Bearer {await admin_token_in(pg.url)}"}
    admin = pg.admin_url
    async with app_client(database_url=pg.url) as c:
        assert [r.status_code for r in await _every_kind_of_request(c, auth)] == [200, 201, 200, 200]

        # 1. Its connections are terminated under it: a request either gets a new connection or is a 503.
        await _admin(admin, _TERMINATE_OTHERS)
        for r in await _every_kind_of_request(c, auth):
            if r.status_code >= 500:
                _assert_unavailable(r)

        # 2. A shutdown in progress (smart: it waits for the session held here), every connection of the app
        # terminated: new connections are refused with CannotConnectNowError.
        held = await asyncpg.connect(asyncpg_dsn(admin))
        try:
            pg.pg_ctl("stop", "-m", "smart", "--no-wait")
            await held.execute(_TERMINATE_OTHERS)
            for r in await _every_kind_of_request(c, auth):
                _assert_unavailable(r)
        finally:
            await held.close()

        # 3. Stopped: connections are refused.
        pg.wait_stopped()
        for r in await _every_kind_of_request(c, auth):
            _assert_unavailable(r)
        assert (await c.get("/healthz")).status_code == 200
        _assert_unavailable(await c.get("/readyz"))

        # 4. Back: the app serves again without a restart (a request may still meet a pooled connection that
        # died with the server, and be a 503; none is a 500).
        pg.start()
        deadline = time.monotonic() + 30
        while True:
            responses = await _every_kind_of_request(c, auth)
            for r in responses:
                if r.status_code >= 500:
                    _assert_unavailable(r)
            if [r.status_code for r in responses] == [200, 201, 200, 200]:
                break
            assert time.monotonic() < deadline, [r.text for r in responses]
            await asyncio.sleep(0.2)
        assert (await c.get("/readyz")).status_code == 200

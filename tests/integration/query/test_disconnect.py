"""A query whose client goes away is cancelled in PostgreSQL, instead of running to its end for nobody."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import asyncpg
import pytest

from app.settings import asyncpg_dsn
from tests.integration.query.helpers import fetch

pytestmark = pytest.mark.usefixtures("web")


async def _running(database_url: str) -> list[asyncpg.Record]:
    """The app's statements in progress."""
    return await fetch(
        database_url,
        "SELECT pid, state, wait_event_type, query FROM pg_stat_activity"
        " WHERE datname = current_database() AND application_name LIKE 'beacon%' AND state = 'active'",
    )


async def _until(condition: Callable[[], Awaitable[bool]], within: float) -> float:
    """Seconds until `condition()` was true (polled), or AssertionError after `within` seconds."""
    started = time.monotonic()
    while not await condition():
        if time.monotonic() - started > within:
            raise AssertionError(f"not within {within} s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


@pytest.mark.parametrize("path", ["/v1/query", "/v1/export"])
async def test_a_client_that_goes_away_cancels_its_statement(
    served: str, auth: dict[str, str], database_url: str, path: str
) -> None:
    # The statement waits for a lock this test holds, as a heavy query would run on: nothing but a cancel ends it
    # before the lock goes (or the 30 s statement timeout).
    locker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with locker.transaction():
            await locker.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            url = urlsplit(served)
            _, writer = await asyncio.open_connection(url.hostname, url.port)
            body = json.dumps({"apl": "['web'] | summarize count() by service"}).encode()
            head = (
                f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nAuthorization: {auth['Authorization']}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()

            async def waiting() -> bool:
                return any(r["wait_event_type"] == "Lock" for r in await _running(database_url))

            await _until(waiting, 20)
            writer.close()  # the client goes away
            await writer.wait_closed()

            async def gone() -> bool:
                return not await _running(database_url)

            await _until(gone, 3)  # while the lock is still held: only a cancel can have ended the statement
    finally:
        await locker.close()

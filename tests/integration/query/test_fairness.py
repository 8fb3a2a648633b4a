"""One token's slow queries leave the others their share of the query pool (app/query/slots.py): a token runs a
few queries at once per process, a few more wait their turn, and past that it is told to retry (429)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import asyncpg
import httpx
from litestar import Litestar

from app.services import services_of
from app.settings import asyncpg_dsn
from tests.helpers import assert_error
from tests.integration.query.conftest import t
from tests.integration.query.loader import load_events
from tests.servers import served_app

SLOW = {"apl": "['slow'] | summarize max(n)", "start_time": "2025-03-01T00:00:00Z", "end_time": "2025-03-01T23:00:00Z"}
FAST = {"apl": "['fast'] | summarize max(n)", "start_time": "2025-05-01T00:00:00Z", "end_time": "2025-05-01T23:00:00Z"}


@asynccontextmanager
async def slow_day(database_url: str) -> AsyncIterator[None]:
    """Queries over 'slow' wait (for a lock on its day's partition) until the block ends; 'fast' is elsewhere."""
    await load_events(database_url, "slow", [{"_time": t("2025-03-01T10:00:00"), "n": 1}])
    await load_events(database_url, "fast", [{"_time": t("2025-05-01T10:00:00"), "n": 2}])
    locker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with locker.transaction():
            await locker.execute("LOCK TABLE events_p20250301 IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        await locker.close()


async def waiting_on_the_lock(database_url: str) -> int:
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND application_name = 'beacon-queries' AND wait_event_type = 'Lock'"
            )
        )
    finally:
        await conn.close()


async def until(condition: Callable[[], object], within: float = 10) -> None:
    deadline = time.monotonic() + within
    while True:
        found = condition()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.05)


async def test_twelve_slow_queries_of_one_token_leave_another_its_share(
    make_app: Callable[..., Litestar], make_token: Callable[..., object], database_url: str
) -> None:
    hog = {"Authorization": f"Bearer {await make_token(['query'], name='hog')}"}  # type: ignore[misc]
    other = {"Authorization": f"Bearer {await make_token(['query'], name='other')}"}  # type: ignore[misc]
    async with served_app(make_app()) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
        async with slow_day(database_url):
            slow = [asyncio.create_task(http.post("/v1/query", json=SLOW, headers=hog)) for _ in range(12)]
            await until(lambda: waiting_on_the_lock(database_url))  # the hog's queries hold their connections
            await asyncio.sleep(0.3)  # all twelve have arrived
            started = time.monotonic()
            fast = await http.post("/v1/query", json=FAST, headers=other, timeout=10)
            elapsed = time.monotonic() - started
            assert fast.status_code == 200 and fast.json()["rows"] == [[2]], fast.text
            assert elapsed < 3, elapsed  # was: it waited for the pool until the hog's queries ended
            assert 0 < await waiting_on_the_lock(database_url) <= 8  # 4 queries at once, up to 2 connections each
        answers = await asyncio.gather(*slow)
    assert [r.status_code for r in answers] == [200] * 12  # 4 ran, 8 waited their turn, none refused
    assert all(r.json()["rows"] == [[1]] for r in answers)


async def test_past_its_queue_a_token_is_told_to_retry(
    make_app: Callable[..., Litestar], auth: dict[str, str], database_url: str
) -> None:
    app = make_app(query_concurrency_per_token=2, query_queue_per_token=1)
    async with served_app(app) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
        async with slow_day(database_url):
            slow = [asyncio.create_task(http.post("/v1/query", json=SLOW, headers=auth)) for _ in range(3)]
            await until(lambda: services_of(app).query_slots.totals() == (2, 1))
            refused = await http.post("/v1/query", json=SLOW, headers=auth)
            exported = await http.post("/v1/export", json=SLOW, headers=auth)
        answers = await asyncio.gather(*slow)
    for r in (refused, exported):
        err = assert_error(r, 429, "rate_limit_exceeded", type_="rate_limit_error")
        assert "2 queries running and 1 waiting" in err["message"] and r.headers["retry-after"] == "1"
    assert [r.status_code for r in answers] == [200] * 3
    assert services_of(app).query_slots.totals() == (0, 0)  # every slot given back

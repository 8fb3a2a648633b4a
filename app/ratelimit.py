"""Per-token rate limits over a rolling 60-second window.

Where the budgets live decides who shares them:
- Redis (BEACON_REDIS_URL): every process shares one budget per token (the `limits` library's moving window).
- PostgreSQL (BEACON_RATE_LIMIT_STORE=postgres, what `beacon serve --workers N` picks without Redis): every
  process on the database shares it too. One round trip per request to `beacon_rate_limit_hit` (migration
  0014_rollups), which counts the key's hits per second over the last 60 seconds under an advisory lock on the
  key, so it is exact across processes; see bench/ratelimit.py for what it costs.
- Process memory (the default for one process): each process has its own budget.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass

import asyncpg
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from app.settings import Settings, asyncpg_dsn


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset: int  # unix seconds at which the oldest counted request leaves the window
    retry_after: int

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


def group_for(method: str, path: str) -> str:
    """The endpoint group of the interface specification: ingest, query, read (any GET) or other. The shippers'
    ingest endpoints (app/shippers/) count as ingest: OTLP logs, Loki's push, and Elasticsearch's `_bulk` (which
    Elastic's clients send as PUT too)."""
    if method == "POST" and path.startswith("/v1/ingest/"):
        return "ingest"
    if method == "POST" and path in {"/v1/logs", "/v1/loki/api/v1/push"}:
        return "ingest"
    if method in {"POST", "PUT"} and path.startswith("/v1/elastic/") and path.endswith("/_bulk"):
        return "ingest"
    if method == "POST" and path in {"/v1/query", "/v1/export"}:
        return "query"
    if method in {"GET", "HEAD"}:
        return "read"
    return "other"


def _decision(allowed: bool, limit: int, used: int, reset_time: float) -> Decision:
    now = time.time()
    reset = max(reset_time, now)
    return Decision(
        allowed=allowed,
        limit=limit,
        remaining=max(0, limit - used),
        reset=math.ceil(reset),
        retry_after=max(1, math.ceil(reset - now)),
    )


async def _as_it_is(conn: asyncpg.Connection) -> None:
    """The budget pool's reset: none. asyncpg's default resets a connection on its way back to the pool (advisory
    locks, cursors, LISTEN, settings: a round trip more per request); these connections only ever run
    `beacon_rate_limit_hit`, whose lock ends with its statement's transaction, and leave no state to reset."""


class PostgresWindow:
    """Budgets in PostgreSQL: a small pool of its own, opened on first use (the app's pools belong to its
    lifespan, the limiter to the app)."""

    def __init__(self, database_url: str, prefix: str) -> None:
        self._dsn = asyncpg_dsn(database_url)
        self._prefix = prefix
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()  # the first requests arrive together: one pool, not one each

    async def pool(self) -> asyncpg.Pool:
        async with self._opening:
            if self._pool is None:
                # No connection yet (min_size 0): a serving process opens one at start (app/db/warm.py).
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=4,
                    reset=_as_it_is,
                    server_settings={"application_name": "beacon-budgets"},  # known apart in pg_stat_activity
                )
            return self._pool

    async def hit(self, item: RateLimitItem, key: str) -> Decision:
        pool = self._pool or await self.pool()
        expiry = item.get_expiry()
        row = await pool.fetchrow(
            "SELECT * FROM beacon_rate_limit_hit($1, $2, $3)", item.key_for(self._prefix, key), item.amount, expiry
        )
        assert row is not None
        return _decision(row["allowed"], item.amount, int(row["used"]), float(row["oldest"] + expiry))

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


class RateLimiter:
    def __init__(self, settings: Settings) -> None:
        self._storage: Storage
        self._postgres: PostgresWindow | None = None
        if settings.redis_url:
            uri = settings.redis_url.replace("redis://", "async+redis://", 1)
            self._storage = RedisStorage(uri, implementation="redispy", key_prefix=settings.redis_key_prefix)
        else:
            self._storage = MemoryStorage()
            if settings.rate_limit_store == "postgres" and settings.database_url:
                self._postgres = PostgresWindow(settings.database_url, settings.redis_key_prefix)
        self._limiter = MovingWindowRateLimiter(self._storage)
        limits = settings.rate_limits
        self._items: dict[str, RateLimitItem] = {
            group: RateLimitItemPerMinute(amount, namespace=f"rl-{group}")
            for group, amount in {
                "ingest": limits.ingest,
                "query": limits.query,
                "read": limits.read,
                "other": limits.other,
            }.items()
        }

    async def pools(self) -> list[asyncpg.Pool]:
        """The database pool of the budgets, when they are kept there (made, not connected, on first call)."""
        return [] if self._postgres is None else [await self._postgres.pool()]

    async def hit(self, token_id: str, group: str) -> Decision:
        return await self.hit_item(self._items[group], token_id)

    async def hit_item(self, item: RateLimitItem, key: str) -> Decision:
        """Count one request of `key` against `item` (any limit, in the same storage as the token budgets)."""
        if self._postgres is not None:
            return await self._postgres.hit(item, key)
        allowed = await self._limiter.hit(item, key)
        stats = await self._limiter.get_window_stats(item, key)
        return _decision(allowed, item.amount, item.amount - stats.remaining, stats.reset_time)

    async def close(self) -> None:
        if self._postgres is not None:
            await self._postgres.close()

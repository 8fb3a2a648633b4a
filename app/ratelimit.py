"""Per-token rate limits over a rolling 60-second window (the `limits` library's moving window).

State lives in process memory by default and in Redis when BEACON_REDIS_URL is set, so several server
processes share one budget per token.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from app.settings import Settings


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
    """The endpoint group of the interface specification: ingest, query, read (any GET) or other."""
    if method == "POST" and path.startswith("/v1/ingest/"):
        return "ingest"
    if method == "POST" and path in {"/v1/query", "/v1/export"}:
        return "query"
    if method in {"GET", "HEAD"}:
        return "read"
    return "other"


class RateLimiter:
    def __init__(self, settings: Settings) -> None:
        self._storage: Storage
        if settings.redis_url:
            uri = settings.redis_url.replace("redis://", "async+redis://", 1)
            self._storage = RedisStorage(uri, implementation="redispy", key_prefix=settings.redis_key_prefix)
        else:
            self._storage = MemoryStorage()
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

    async def hit(self, token_id: str, group: str) -> Decision:
        return await self.hit_item(self._items[group], token_id)

    async def hit_item(self, item: RateLimitItem, key: str) -> Decision:
        """Count one request of `key` against `item` (any limit, in the same storage as the token budgets)."""
        allowed = await self._limiter.hit(item, key)
        stats = await self._limiter.get_window_stats(item, key)
        now = time.time()
        reset = max(stats.reset_time, now)
        return Decision(
            allowed=allowed,
            limit=item.amount,
            remaining=max(0, stats.remaining),
            reset=math.ceil(reset),
            retry_after=max(1, math.ceil(reset - now)),
        )

"""Sign-in throttle: console sign-in attempts per client address and in total, over a rolling minute.

Every attempt is counted before its token is looked up, so that a burst sent at once is cut at the limit (counting
only failures would let every request of the burst through before the first failure was counted). Once over,
the form answers 429 with `Retry-After` without looking at the token, right or wrong. The budgets live in the
rate limiter's storage (Redis when configured: shared by every process). A session already signed in is not
affected.
"""

from __future__ import annotations

from limits import RateLimitItemPerMinute

from app.ratelimit import RateLimiter
from app.settings import RateLimits


class SignInThrottled(Exception):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class SignInThrottle:
    def __init__(self, limiter: RateLimiter, limits: RateLimits) -> None:
        self._limiter = limiter
        self._per_address = RateLimitItemPerMinute(limits.sign_in_per_address, namespace="sign-in-address")
        self._total = RateLimitItemPerMinute(limits.sign_in, namespace="sign-in")

    async def attempt(self, address: str) -> None:
        """Count an attempt from `address`; SignInThrottled when it is over either budget."""
        mine = await self._limiter.hit_item(self._per_address, address)
        if not mine.allowed:
            raise SignInThrottled(
                f"Too many sign-in attempts from this address; try again in {mine.retry_after} s.", mine.retry_after
            )
        everyone = await self._limiter.hit_item(self._total, "all")
        if not everyone.allowed:
            raise SignInThrottled(
                f"Too many sign-in attempts on this server; try again in {everyone.retry_after} s.",
                everyone.retry_after,
            )

"""Sign-in throttle: console sign-in attempts per client address and in total, over a rolling minute.

Every attempt is counted before its token is looked up, so that a burst sent at once is cut at the limit (counting
only failures would let every request of the burst through before the first failure was counted).
- Over its address's budget, the form answers 429 with `Retry-After` without looking at the token: that address
  is the client's own (forwarded headers are believed only from `BEACON_TRUSTED_PROXIES`), so only its own
  failures lock it out.
- Over the budget of all addresses together, an attempt is still checked: a valid token signs in, any other gets
  429. That budget cannot tell the admin from an attacker, and must never lock a valid token out; a token has
  240 random bits, so what it slows down is scripts, not a search that could succeed.
The budgets live in the rate limiter's storage (Redis when configured: shared by every process). A session
already signed in is not affected.
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

    async def attempt(self, address: str) -> SignInThrottled | None:
        """Count an attempt from `address`. Raises SignInThrottled when the address is over its budget; returns
        one (the answer for an invalid token) when all addresses together are over theirs, else None."""
        mine = await self._limiter.hit_item(self._per_address, address)
        if not mine.allowed:
            raise SignInThrottled(
                f"Too many sign-in attempts from this address; try again in {mine.retry_after} s.", mine.retry_after
            )
        everyone = await self._limiter.hit_item(self._total, "all")
        if not everyone.allowed:
            return SignInThrottled(
                f"Too many sign-in attempts on this server; try again in {everyone.retry_after} s.",
                everyone.retry_after,
            )
        return None

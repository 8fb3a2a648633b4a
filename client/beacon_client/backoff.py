"""The reference back-off (interface specification 8.1), as pure policy shared by the sync and async clients.

On 429 wait `Retry-After` seconds; without the header, an exponentially growing wait with jitter. 5xx
responses and connection errors are retried the same way. After `max_retries` retries (5), give up.

The jitter is "equal jitter": retry n waits a uniformly random time in [d/2, d] with d = base * 2**n (capped),
so clients that failed together spread out, and every wait is still at least as long as the one before.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

MAX_RETRIES = 5


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def retryable_error(exc: Exception) -> bool:
    """Connection failures, broken connections and timeouts; not a malformed URL or an unsupported scheme."""
    return isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError)


def parse_retry_after(value: str | None, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now()).total_seconds())


@dataclass(frozen=True)
class Backoff:
    """When to retry and how long to wait. `retry` below is 0 for the first retry, 1 for the second, ..."""

    max_retries: int = MAX_RETRIES
    base: float = 0.5  # seconds: the first exponential wait is between base/2 and base
    cap: float = 30.0  # no exponential wait is longer than this
    random: Callable[[], float] = field(default=random.random, repr=False)

    def exponential(self, retry: int) -> float:
        ceiling = min(self.cap, self.base * 2.0**retry)
        return ceiling / 2 + self.random() * ceiling / 2

    def delay_after_response(self, retry: int, status: int, retry_after: str | None) -> float | None:
        """Seconds to wait before retrying a response with this status; None: do not retry (raise)."""
        if not retryable_status(status) or retry >= self.max_retries:
            return None
        waited = parse_retry_after(retry_after)
        return waited if waited is not None else self.exponential(retry)

    def delay_after_error(self, retry: int, exc: Exception) -> float | None:
        """Seconds to wait before retrying after a transport error; None: do not retry (raise)."""
        if not retryable_error(exc) or retry >= self.max_retries:
            return None
        return self.exponential(retry)

"""One event-loop timer for many due times (the dispatcher's retries, paced messages, ends of mutes)."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable


class WakeTimer:
    """Calls `wake` at each time it was given: one loop timer, set for the earliest; when it fires it is set for the
    next. The time it is set for is kept here: uvloop's `call_at` for a time less than half a millisecond ahead (it
    counts milliseconds) returns a plain Handle, without `when()`."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self.wake = wake
        self._due: list[float] = []  # a heap of loop times
        self._timer: asyncio.Handle | None = None
        self._timer_at = 0.0

    def after(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        at = loop.time() + max(delay, 0.0) + 0.005
        heapq.heappush(self._due, at)
        if self._timer is None or at < self._timer_at:
            self._set(loop)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due.clear()

    @property
    def pending(self) -> int:
        return len(self._due)

    def _set(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        if self._due:
            self._timer_at = self._due[0]
            self._timer = loop.call_at(self._timer_at, self._fired)

    def _fired(self) -> None:
        loop = asyncio.get_running_loop()
        while self._due and self._due[0] <= loop.time():
            heapq.heappop(self._due)
        self._timer = None
        self._set(loop)
        self.wake()

"""Event-loop timers: one for many due times (`WakeTimer`: the dispatcher's retries, paced messages, ends of mutes),
and one for the next run of a loop that reads its next time anew on each run (`Alarm`: the router, the monitors)."""

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


class Alarm:
    """Calls `wake` once, at the earliest time it was set for since it last rang. A later time asked for meanwhile
    is dropped: the run it wakes reads the next time anew, so no chain of wake-ups outlives the times it was set
    for (one per run that set it)."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self.wake = wake
        self._handle: asyncio.TimerHandle | None = None
        self._at = 0.0

    def after(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        at = loop.time() + max(delay, 0.0) + 0.002
        if self._handle is not None and self._at <= at:
            return
        self.cancel()
        self._at = at
        self._handle = loop.call_at(at, self._rang)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _rang(self) -> None:
        self._handle = None
        self.wake()

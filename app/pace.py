"""Work proportional to what is stored, kept from holding the event loop: views of every alert with their silences
(app/routing/views.py) run in slices, give up past a time limit, stop when their client goes away, and send a
big answer encoded off the loop.

One process serves every request on one event loop: a request that computes for 13 minutes without an `await`
holds up every other one (/healthz included) as long. A `Pace` gives the loop a turn every few milliseconds of
work; `bounded` runs a view beside a watch on its client (app/disconnect.py) and under a deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec
from litestar.types import Receive

from app.disconnect import unless_disconnected
from app.errors import BeaconError

T = TypeVar("T")
SLICE_SECONDS = 0.005
BIG_ANSWER = 1_000  # items of an answer encoded on a worker thread from this many (about 0.5 MB of alerts)


class Pace:
    """Call `tick()` between units of work: it yields to the event loop once a slice's time has passed."""

    def __init__(self, seconds: float = SLICE_SECONDS) -> None:
        self._seconds = seconds
        self._since = time.perf_counter()

    async def tick(self) -> None:
        if time.perf_counter() - self._since >= self._seconds:
            await asyncio.sleep(0)
            self._since = time.perf_counter()


async def bounded(receive: Receive, work: Awaitable[T], *, seconds: float, what: str) -> T:
    """`work`'s result; cancelled when the client goes away (ClientGone), or past `seconds` (503
    `view_timeout`, naming `what`)."""
    try:
        async with asyncio.timeout(seconds):
            return await unless_disconnected(receive, work)
    except TimeoutError:
        raise BeaconError(
            "view_timeout",
            f"{what} took longer than {seconds:g} s and was stopped; narrow it (filter by labels or state).",
            headers={"Retry-After": "60"},
        ) from None


async def encoded(value: Any, items: int) -> bytes | None:
    """`value` as JSON, encoded on a worker thread when it holds `items` >= BIG_ANSWER; None for a small one (the
    framework encodes it on the loop)."""
    if items < BIG_ANSWER:
        return None
    return await asyncio.to_thread(msgspec.json.encode, value)

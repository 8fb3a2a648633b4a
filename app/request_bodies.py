"""Request bodies arrive in bounded time and memory, and nothing waits on them holding a database connection.

An ASGI server hands a handler its body as the client sends it, and waits as long as the client does: 40 clients
that declared 1,000 bytes and sent one held 40 requests forever, and those that held a database connection
meanwhile (ingest streamed its body inside its transaction) took the pool from everyone. So:

- Every route reads its whole body before it takes a connection: Litestar reads `data` (and the before_request
  hook, app/inputs.py, the raw body) before the handler runs; ingest reads its body itself, first
  (app/ingest/controllers.py). The session is lazy: it takes a connection at its first statement.
- `BodyGuard` (an ASGI middleware around every route) times the body out: each piece must arrive within
  `body_idle_seconds` of the previous one, the whole body within `body_total_seconds` of the request's start;
  past either, the request fails with 408 `request_timeout` and the connection is closed (the rest of the body
  is not awaited). Only the reading of the body is timed: a handler at work, or a watch for the client's
  disconnect once the body is in (app/disconnect.py), waits as long as it needs.
- The bytes of bodies held by the process at once are bounded by `body_buffer_bytes`: a request whose next
  piece would pass the bound waits (its client's TCP window fills, it sends nothing more) until other requests
  end; one that waits past its total deadline is a 503 with `Retry-After`. The bytes are returned when the
  request ends. Only bytes that arrived count, so a client that declares 10 MB and sends nothing takes none.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass

from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, ReceiveMessage, Scope, Send

from app.errors import BeaconError


@dataclass(frozen=True)
class BodyLimits:
    idle_seconds: float = 15.0
    total_seconds: float = 120.0
    buffer_bytes: int = 256 * 1024 * 1024


class BodyBudget:
    """Bytes of request bodies this process may hold at once; first come, first served."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.free = capacity
        self._waiting: deque[tuple[int, asyncio.Future[None]]] = deque()

    async def take(self, n: int, within: float) -> int:
        """Take `n` bytes (what was taken is returned, to be given back), waiting at most `within` seconds for
        them; TimeoutError otherwise."""
        n = min(n, self.capacity)  # one piece larger than the whole budget waits for all of it, not forever
        if not self._waiting and self.free >= n:
            self.free -= n
            return n
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (n, waiter)
        self._waiting.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), max(within, 0.0))
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.give(n)  # granted just as we gave up: hand it on
            else:
                waiter.cancel()
                self._waiting.remove(entry)
                self._wake()
            raise
        return n

    def give(self, n: int) -> None:
        self.free = min(self.capacity, self.free + n)
        self._wake()

    def _wake(self) -> None:
        while self._waiting and self._waiting[0][0] <= self.free:
            n, waiter = self._waiting.popleft()
            self.free -= n
            waiter.set_result(None)


def _timed_out(what: str) -> BeaconError:
    return BeaconError(
        "request_timeout",
        f"The request body {what}; nothing was done. Send the whole body without pauses.",
        headers={"Connection": "close"},
    )


class _GuardedReceive:
    """`receive` of one request, timed and counted until its body is complete."""

    def __init__(self, receive: Receive, limits: BodyLimits, budget: BodyBudget) -> None:
        self._receive = receive
        self._limits = limits
        self._budget = budget
        self._deadline = time.monotonic() + limits.total_seconds
        self._complete = False
        self.held = 0

    async def __call__(self) -> ReceiveMessage:
        if self._complete:
            return await self._receive()
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(f"did not arrive within {self._limits.total_seconds:g} s")
        try:
            async with asyncio.timeout(min(self._limits.idle_seconds, left)):  # no task per piece, as wait_for makes
                message = await self._receive()
        except TimeoutError:
            if left <= self._limits.idle_seconds:
                raise _timed_out(f"did not arrive within {self._limits.total_seconds:g} s") from None
            raise _timed_out(f"stopped arriving for {self._limits.idle_seconds:g} s") from None
        if message["type"] != "http.request":
            # The client went away before its body was complete: its doing, not the server's (Litestar would call
            # it an internal error, a 500 in the access log and the metrics).
            self._complete = True
            raise BeaconError("client_closed_request", "The client closed the connection before sending its body.")
        size = len(message.get("body", b""))
        if size:
            try:
                self.held += await self._budget.take(size, self._deadline - time.monotonic())
            except TimeoutError:
                raise BeaconError(
                    "service_unavailable",
                    "The server is holding as many request bodies as it may; retry after `Retry-After`.",
                    headers={"Retry-After": "5", "Connection": "close"},
                ) from None
        if not message.get("more_body", False):
            self._complete = True
        return message


class BodyGuard(ASGIMiddleware):
    """The app's guard: its limits, and the budget of bytes every request of the process takes from."""

    scopes = ("http",)  # type: ignore[assignment]

    def __init__(self, limits: BodyLimits) -> None:
        self.limits = limits
        self.budget = BodyBudget(limits.buffer_bytes)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        guarded = _GuardedReceive(receive, self.limits, self.budget)
        try:
            await next_app(scope, guarded, send)
        finally:
            if guarded.held:
                self.budget.give(guarded.held)

"""Queries in flight per token, so that one token cannot take the whole query pool from the others.

The query pool (app/db/reads.py) holds 10 connections per process; 12 slow queries of one token took them all,
and another token's 4 ms query waited 17 s for one. Each token may now run `running` queries at once in a
process (POST /v1/query, /v1/export until its stream ends, the console's pages that query); `waiting` more
wait their turn, first come first served, holding no connection; past that the request is a 429 with
`Retry-After`. A waiting request whose client goes away leaves the queue (its task is cancelled).

Per process, on purpose: the pool that is shared is each process's own, so each process bounds what one token
takes of it. With N server processes a token may run N x `running` queries in all.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from app.errors import BeaconError

RETRY_AFTER_SECONDS = 1


@dataclass
class _Token:
    running: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)


class QuerySlots:
    def __init__(self, running: int, waiting: int) -> None:
        self.running = max(1, running)
        self.waiting = max(0, waiting)
        self._tokens: dict[str, _Token] = {}

    @asynccontextmanager
    async def hold(self, token_id: str) -> AsyncIterator[None]:
        await self.acquire(token_id)
        try:
            yield
        finally:
            self.release(token_id)

    async def acquire(self, token_id: str) -> None:
        """A slot for one query of this token (release it with `release`); 429 when its queue is full."""
        token = self._tokens.setdefault(token_id, _Token())
        if token.running < self.running and not token.waiting:
            token.running += 1
            return
        if len(token.waiting) >= self.waiting:
            raise BeaconError(
                "rate_limit_exceeded",
                f"This token has {token.running} queries running and {len(token.waiting)} waiting, the most it may "
                f"at once; retry after `Retry-After` seconds, or send fewer queries at a time.",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        token.waiting.append(turn)
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.release(token_id)  # its slot came just as it gave up: pass it on
            else:
                turn.cancel()
                if turn in token.waiting:
                    token.waiting.remove(turn)
                self._forget(token_id, token)
            raise

    def release(self, token_id: str) -> None:
        token = self._tokens.get(token_id)
        if token is None:
            return
        while token.waiting:
            turn = token.waiting.popleft()
            if not turn.done():  # one cancelled meanwhile is passed over
                turn.set_result(None)  # the slot goes to the next in line as it is
                return
        token.running -= 1
        self._forget(token_id, token)

    def totals(self) -> tuple[int, int]:
        """(running, waiting) queries of every token now."""
        return (
            sum(t.running for t in self._tokens.values()),
            sum(len(t.waiting) for t in self._tokens.values()),
        )

    def _forget(self, token_id: str, token: _Token) -> None:
        if token.running <= 0 and not token.waiting:
            self._tokens.pop(token_id, None)

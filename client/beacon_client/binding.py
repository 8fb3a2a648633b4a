"""Turn an endpoint function (arguments -> `Call[T]`) into a client method with the same signature.

`sync_method(spec)` gives a method returning T; `async_method(spec)` one returning an awaitable of T. The
ParamSpec carries the endpoint's parameters through, so type checkers see each method's precise signature.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from beacon_client.call import Call

P = ParamSpec("P")
T = TypeVar("T")


class SyncSender(Protocol):
    def _send(self, call: Call[T]) -> T: ...


class AsyncSender(Protocol):
    async def _send(self, call: Call[T]) -> T: ...


def sync_method(spec: Callable[P, Call[T]]) -> Callable[Concatenate[SyncSender, P], T]:
    @functools.wraps(spec)
    def method(self: SyncSender, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._send(spec(*args, **kwargs))

    return method


def async_method(spec: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncSender, P], Coroutine[Any, Any, T]]:
    @functools.wraps(spec)
    async def method(self: AsyncSender, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._send(spec(*args, **kwargs))

    return method

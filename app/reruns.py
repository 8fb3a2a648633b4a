"""A job a process runs in the background, one run at a time: asked for during a run, it runs once more after it,
however often it was asked (the router, the monitor loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class OneAtATime:
    """Subclasses give `_run_once`; `wake` asks for a run."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._stopped = False

    def wake(self) -> None:
        self._start(self._runs)

    def _start(self, run: Callable[[], Awaitable[None]]) -> None:
        """`run` in the background, unless a run is under way: that one then runs once more."""
        if self._stopped:
            return
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(run())

    async def _runs(self) -> None:
        self._again = True
        while self._again and not self._stopped:
            self._again = False
            await self._run_once()

    async def _run_once(self) -> None:
        raise NotImplementedError

    async def idle(self) -> None:
        """Until no run is in progress (the scheduler's job; tests; shutdown)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def stop(self) -> None:
        self._stopped = True
        await self.idle()

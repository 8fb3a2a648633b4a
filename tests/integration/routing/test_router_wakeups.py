"""This process's router wakes when the next group falls due, also while another process holds a group that was due
before it (flushing it): the held group is not the next wake-up's reason, and never holds back the next one. The
scheduler's poll runs the router only when there is work, and still sets the wake-up for the next group."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta

import asyncpg

from app.routing.jobs import Router
from app.settings import asyncpg_dsn
from tests.integration.routing.conftest import Clock
from tests.integration.routing.test_grouping import ROOT, alert


class Running(Clock):
    """The test's clock, running at the pace of real time from where the test set it (the router's timers are real
    event-loop timers)."""

    def __init__(self, start: datetime) -> None:
        super().__init__(start)
        self._set_at = time.monotonic()

    def __call__(self) -> datetime:
        return self.now + timedelta(seconds=time.monotonic() - self._set_at)

    def set(self, now: datetime) -> None:
        self.now, self._set_at = now, time.monotonic()


FLUSHED = "SELECT flushed_at IS NOT NULL FROM alert_groups WHERE labels->>'instance' = $1"


async def _flushed(database_url: str, instance: str) -> bool:
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        return bool(await conn.fetchval(FLUSHED, instance))
    finally:
        await conn.close()


async def _seconds_until_flushed(database_url: str, instance: str, limit: float) -> float:
    began = time.monotonic()
    for _ in range(int(limit / 0.02)):
        if await _flushed(database_url, instance):
            break
        await asyncio.sleep(0.02)
    return time.monotonic() - began


async def test_a_group_held_elsewhere_does_not_hold_back_the_next_group_due(h, database_url: str) -> None:
    hook = await h.notifier()
    await h.routing({**ROOT, "group_by": ["instance"], "notifier_ids": [hook]})
    start = h.clock.now
    day = (start + timedelta(days=1)).isoformat()
    await h.post(alert("Down", "held", ends_at=day))
    await h.route()  # formed at `start`: due at start + 30 s
    h.clock.advance(10)
    await h.post(alert("Down", "next", ends_at=day))
    await h.route()  # formed at start + 10 s: due at start + 40 s

    # Another process is flushing the first group (its row locked in an open transaction) when the second falls due.
    other = await asyncpg.connect(asyncpg_dsn(database_url))
    router: Router | None = None
    try:
        held = other.transaction()
        await held.start()
        await other.execute("SELECT 1 FROM alert_groups WHERE labels->>'instance' = 'held' FOR UPDATE")
        running = Running(start + timedelta(seconds=39.6))  # the second group falls due in 0.4 s
        h.renv.clock = running
        router = Router(h.renv)
        router.wake()
        took = await _seconds_until_flushed(database_url, "next", limit=3)
        assert await _flushed(database_url, "next"), "the group that fell due was not flushed while another was held"
        assert 0.35 <= took < 1.5, took  # when it fell due, not before, not at a tick (there is none here)
        assert not await _flushed(database_url, "held")  # still the other process's
        await held.rollback()
    finally:
        if router is not None:
            await router.stop()
        await other.close()


GROUPS = "SELECT count(*) FROM alert_groups"


async def test_a_poll_with_nothing_to_do_takes_no_lock_and_wakes_when_the_next_group_falls_due(
    h, database_url: str
) -> None:
    """The scheduler's tick in every process: when nothing waits to be placed and no group is due, one plain read
    (it does not wait behind a writer holding the alerts table) and a wake-up set for the next group."""
    hook = await h.notifier()
    await h.routing({**ROOT, "group_by": ["instance"], "notifier_ids": [hook]})
    start = h.clock.now
    await h.post(alert("Down", "soon", ends_at=(start + timedelta(days=1)).isoformat()))
    await h.route()  # placed at `start`: due at start + 30 s; nothing is left to place

    writer = await asyncpg.connect(asyncpg_dsn(database_url))
    router: Router | None = None
    try:
        locked = writer.transaction()
        await locked.start()
        await writer.execute("LOCK TABLE alerts IN EXCLUSIVE MODE")  # a run's claim (FOR UPDATE) would wait here
        h.renv.clock = Running(start + timedelta(seconds=29.6))  # the group falls due in 0.4 s
        router = Router(h.renv)
        router.poll()
        try:
            await asyncio.wait_for(router.idle(), 2)  # a run would still wait for the lock
        finally:
            await locked.rollback()
        took = await _seconds_until_flushed(database_url, "soon", limit=3)
        assert await _flushed(database_url, "soon"), "the poll set no wake-up for the next group"
        assert 0.25 <= took < 1.5, took  # when it fell due, with no tick after the poll
    finally:
        if router is not None:
            await router.stop()
        await writer.close()


async def test_a_poll_places_what_another_process_posted(h, database_url: str) -> None:
    hook = await h.notifier()
    await h.routing({**ROOT, "group_by": ["instance"], "notifier_ids": [hook]})
    await h.route()  # this process has run once: nothing to place, no garbage to collect for a while
    await h.post(alert("Down", "elsewhere"))  # by another process: this one's router was not woken
    router = Router(h.renv)
    try:
        router.poll()
        await router.idle()
    finally:
        await router.stop()
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        assert await conn.fetchval(GROUPS) == 1
    finally:
        await conn.close()

"""The Alarm the router and the monitor loop wake by: it rings once, at the earliest time set since it last rang;
a later time asked for meanwhile is dropped (the run it wakes reads its next time anew), so wake-ups never pile up."""

from __future__ import annotations

import asyncio

from app.deliveries.timers import Alarm


async def test_it_rings_once_at_the_earliest_time_it_was_set_for() -> None:
    loop = asyncio.get_running_loop()
    rang: list[float] = []
    alarm = Alarm(lambda: rang.append(loop.time()))
    start = loop.time()
    alarm.after(0.3)
    alarm.after(0.1)  # earlier: it replaces the 0.3
    alarm.after(0.2)  # later than the one set: dropped
    await asyncio.sleep(0.5)
    assert len(rang) == 1 and 0.1 <= rang[0] - start < 0.25

    alarm.after(0.05)
    alarm.cancel()
    alarm.after(-1)  # past: at once
    await asyncio.sleep(0.1)
    assert len(rang) == 2
    alarm.after(0.05)
    alarm.cancel()
    await asyncio.sleep(0.1)
    assert len(rang) == 2

"""Queries in flight per token (app/query/slots.py): a few run, a few wait in order, the rest are refused."""

from __future__ import annotations

import asyncio

import pytest

from app.errors import BeaconError
from app.query.slots import QuerySlots


async def test_tokens_have_slots_of_their_own() -> None:
    slots = QuerySlots(running=2, waiting=0)
    await slots.acquire("a")
    await slots.acquire("a")
    with pytest.raises(BeaconError) as refused:
        await slots.acquire("a")
    assert refused.value.code == "rate_limit_exceeded" and refused.value.headers["Retry-After"] == "1"
    await slots.acquire("b")  # another token is not held up by a's
    assert slots.totals() == (3, 0)
    for token in ("a", "a", "b"):
        slots.release(token)
    assert slots.totals() == (0, 0)


async def test_waiting_queries_run_in_order_as_slots_free() -> None:
    slots = QuerySlots(running=1, waiting=2)
    order: list[int] = []
    await slots.acquire("a")

    async def query(i: int) -> None:
        async with slots.hold("a"):
            order.append(i)

    first, second = asyncio.create_task(query(1)), asyncio.create_task(query(2))
    await asyncio.sleep(0.01)
    assert slots.totals() == (1, 2) and order == []
    slots.release("a")
    await asyncio.gather(first, second)
    assert order == [1, 2] and slots.totals() == (0, 0)


async def test_a_waiting_query_whose_client_goes_leaves_the_queue() -> None:
    slots = QuerySlots(running=1, waiting=1)
    await slots.acquire("a")
    gone = asyncio.create_task(slots.acquire("a"))
    await asyncio.sleep(0.01)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert slots.totals() == (1, 0)
    slots.release("a")
    assert slots.totals() == (0, 0)


async def test_a_slot_handed_to_a_query_cancelled_meanwhile_goes_to_the_next() -> None:
    slots = QuerySlots(running=1, waiting=2)
    await slots.acquire("a")
    cancelled, next_one = asyncio.create_task(slots.acquire("a")), asyncio.create_task(slots.acquire("a"))
    await asyncio.sleep(0.01)
    slots.release("a")  # handed to `cancelled`, which is cancelled before it runs
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    await asyncio.wait_for(next_one, 1)
    assert slots.totals() == (1, 0)
    slots.release("a")
    assert slots.totals() == (0, 0)

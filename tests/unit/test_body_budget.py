"""The bytes of request bodies a process holds at once (app/request_bodies.py): taken as they arrive, given
back when the request ends, first come first served, a wait bounded in time."""

from __future__ import annotations

import asyncio

import pytest

from app.request_bodies import BodyBudget


async def test_bytes_are_taken_and_given_back() -> None:
    budget = BodyBudget(100)
    assert await budget.take(60, within=1) == 60
    assert await budget.take(40, within=1) == 40
    assert budget.free == 0
    budget.give(100)
    assert budget.free == 100


async def test_a_request_waits_for_bytes_until_others_end() -> None:
    budget = BodyBudget(100)
    await budget.take(90, within=1)
    waiting = asyncio.create_task(budget.take(20, within=5))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    budget.give(90)
    assert await waiting == 20 and budget.free == 80


async def test_a_wait_past_its_timeout_fails_and_takes_nothing() -> None:
    budget = BodyBudget(100)
    await budget.take(100, within=1)
    with pytest.raises(TimeoutError):
        await budget.take(1, within=0.05)
    budget.give(100)
    assert budget.free == 100


async def test_first_come_first_served() -> None:
    budget = BodyBudget(100)
    await budget.take(100, within=1)
    big = asyncio.create_task(budget.take(80, within=5))
    await asyncio.sleep(0.01)
    small = asyncio.create_task(budget.take(10, within=5))  # would fit before `big`, but comes after it
    await asyncio.sleep(0.01)
    budget.give(20)
    await asyncio.sleep(0.01)
    assert not big.done() and not small.done()
    budget.give(80)
    assert await big == 80 and await small == 10


async def test_a_waiter_that_gives_up_lets_the_next_one_in() -> None:
    budget = BodyBudget(100)
    await budget.take(50, within=1)
    blocked = asyncio.create_task(budget.take(80, within=0.05))
    await asyncio.sleep(0.01)
    behind = asyncio.create_task(budget.take(40, within=5))
    with pytest.raises(TimeoutError):
        await blocked
    assert await behind == 40


async def test_a_piece_larger_than_the_budget_takes_all_of_it() -> None:
    budget = BodyBudget(100)
    assert await budget.take(500, within=1) == 100

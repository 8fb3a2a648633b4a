"""The LeaseKeeper: the leases of the rows a process holds are extended while it holds them, and only those."""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import text

from adapters import testing as kit
from app.deliveries import service
from app.deliveries.leases import Claimed, LeaseKeeper
from tests.offline_dns import offline_delivery_env


async def leased_rows(db, local_settings, tokens: list[str]) -> list[str]:
    env = offline_delivery_env(local_settings, db)
    await env.http.aclose()
    async with db() as s:
        ids = [
            service.enqueue(s, env, notifier_id="ntf_x", event=kit.sample_events()["triggered"], monitor_id=f"m{i}").id
            for i in range(len(tokens))
        ]
        await s.commit()
        lease = "UPDATE deliveries SET claim_token = :t, claimed_until = now() + interval '1 second' WHERE id = :id"
        for dlv, token in zip(ids, tokens, strict=True):
            await s.execute(text(lease), {"t": token, "id": dlv})
        await s.commit()
    return ids


async def lease_left(db, delivery_id: str) -> float:
    async with db() as s:
        found = await s.execute(
            text("SELECT extract(epoch FROM claimed_until - now()) FROM deliveries WHERE id = :id"), {"id": delivery_id}
        )
        return float(found.scalar_one())


def claimed(delivery_id: str, token: str) -> Claimed:
    now = time.monotonic()
    return Claimed(delivery_id, "ntf_x", token, 0, 10, plan=None, claimed_at=now, deadline=now + 1.0)  # type: ignore[arg-type]


async def test_held_leases_are_extended_and_a_lost_one_is_marked(db, local_settings):
    mine, taken = await leased_rows(db, local_settings, ["tok_mine", "tok_mine2"])
    keeper = LeaseKeeper(db.kw["bind"], lease_seconds=1.0)  # extended every 0.25 s
    held, other = claimed(mine, "tok_mine"), claimed(taken, "tok_mine2")
    keeper.hold([held, other])
    # Dropped and held again at once (as between two claims): the keeper goes on extending.
    keeper.drop(held)
    keeper.drop(other)
    keeper.hold([held, other])
    async with db() as s:  # another process takes the second row over
        await s.execute(text("UPDATE deliveries SET claim_token = 'theirs' WHERE id = :id"), {"id": taken})
        await s.commit()
    try:
        await asyncio.sleep(1.6)  # past the first lease
        assert await lease_left(db, mine) > 0.5  # extended: still ours
        assert held.deadline > time.monotonic() + 0.5 and not held.lost
        assert other.lost and other.delivery_id not in keeper.held  # not ours any more: never sent from here
    finally:
        await keeper.stop()

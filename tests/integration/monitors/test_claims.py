"""The loop's claim: advisory try-locks on the monitors' ids (app/monitors/tick.py), not FOR UPDATE SKIP LOCKED on
`monitors` (a reference table on Citus, issue 32). A monitor held elsewhere (by an evaluation, an update, another
process's batch) is skipped at once, the others are evaluated, and it is evaluated once it is free."""

from __future__ import annotations

import asyncio

from sqlalchemy import text

from app.auth import Principal
from app.monitors import service
from app.monitors.tick import claim_and_evaluate

ADMIN = Principal(token_id="tok_test", scopes=frozenset({"*"}), datasets=None)


async def test_a_held_monitor_is_skipped_and_evaluated_once_free(h):
    await h.ingest("web", [{"_time": h.at(10), "status": 500}])
    held = await h.monitor(apl="['web'] | where status >= 500 | summarize count()", operator="above", threshold=0)
    free = await h.monitor(apl="['web'] | summarize count()", operator="above", threshold=5)
    at = h.at(60)
    async with h.db() as s:
        await s.execute(text("UPDATE monitors SET next_evaluation_at = :at"), {"at": at})
        await s.commit()

    async with h.db() as holder:
        await service.get_monitor(holder, ADMIN, held["id"], for_update=True)  # as PATCH or evaluate-now hold it
        reports = await asyncio.wait_for(claim_and_evaluate(h.env, at), 5)  # never waits for the holder
        assert [r.monitor.id for r in reports or []] == [free["id"]]
        assert await asyncio.wait_for(claim_and_evaluate(h.env, at), 5) is None  # the rest is held: nothing to do
        await holder.rollback()

    reports = await claim_and_evaluate(h.env, at)
    assert [r.monitor.id for r in reports or []] == [held["id"]]
    assert (await h.get(held["id"]))["state"] == "alerting"
    assert await claim_and_evaluate(h.env, at) is None  # each evaluated once for this due time


async def test_two_lanes_share_a_batch_without_evaluating_a_monitor_twice(h):
    await h.ingest("web", [{"_time": h.at(10), "status": 500}])
    made = [
        await h.monitor(apl=f"['web'] | where status >= {400 + i} | summarize count()", operator="above", threshold=0)
        for i in range(6)
    ]
    at = h.at(60)
    async with h.db() as s:
        await s.execute(text("UPDATE monitors SET next_evaluation_at = :at"), {"at": at})
        await s.commit()
    first, second = await asyncio.gather(claim_and_evaluate(h.env, at, batch=4), claim_and_evaluate(h.env, at, batch=4))
    evaluated = [r.monitor.id for r in (first or []) + (second or [])]
    assert sorted(evaluated) == sorted(m["id"] for m in made)  # each once, whichever lane got it

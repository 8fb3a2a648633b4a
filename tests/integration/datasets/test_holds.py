"""Datasets held by advisory locks (app/datasets/holds.py), as the row locks did before (issue 32): a delete waits
for the ingests in flight and keeps new ones out, ingests and changes of settings do not wait for each other or
for other datasets, and an ingest whose dataset was deleted while it waited writes into a new one."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from app.auth import Principal
from app.datasets.holds import hold_or_create
from app.datasets.service import delete_dataset, get_dataset
from app.errors import BeaconError

ADMIN = Principal(token_id="tok_test", scopes=frozenset({"*"}), datasets=None)
WAIT = 0.5  # long enough for a lock that is free to be granted


async def _make(db, name: str) -> int:
    async with db() as s:
        dataset_id, created = await hold_or_create(s, name)
        await s.commit()
    assert created
    return dataset_id


async def test_a_delete_waits_for_the_ingest_in_flight(db):
    web = await _make(db, "web")
    async with db() as ingest:
        held, created = await hold_or_create(ingest, "web")
        assert (held, created) == (web, False)
        await ingest.execute(text("INSERT INTO event_rollups VALUES (:id, now(), 3)"), {"id": web})

        async def delete() -> None:
            async with db() as s:
                await delete_dataset(s, await get_dataset(s, "web", ADMIN, hold="exclusive"))

        deleting = asyncio.ensure_future(delete())
        await asyncio.sleep(WAIT)
        assert not deleting.done()  # held by the ingest
        await ingest.commit()
    await asyncio.wait_for(deleting, 10)
    async with db() as s:  # the counts the ingest wrote went with the dataset
        assert (
            await s.execute(text("SELECT count(*) FROM event_rollups WHERE dataset_id = :id"), {"id": web})
        ).scalar() == 0


async def test_ingests_and_changes_do_not_wait_for_each_other(db):
    web, api = await _make(db, "web"), await _make(db, "api")
    async with db() as a, db() as b, db() as c, db() as d:
        assert await hold_or_create(a, "web") == (web, False)
        # Another ingest into it, a change of its settings, an ingest into another dataset: none waits.
        assert await asyncio.wait_for(hold_or_create(b, "web"), WAIT) == (web, False)
        patched = await asyncio.wait_for(get_dataset(c, "web", ADMIN, hold="shared"), WAIT)
        assert patched.id == web
        assert await asyncio.wait_for(hold_or_create(d, "api"), WAIT) == (api, False)
        for s in (a, b, c, d):
            await s.rollback()


async def test_a_delete_of_one_dataset_does_not_wait_for_ingests_into_another(db):
    await _make(db, "web")
    await _make(db, "api")
    async with db() as ingest, db() as deleting:
        await hold_or_create(ingest, "web")
        found = await asyncio.wait_for(get_dataset(deleting, "api", ADMIN, hold="exclusive"), WAIT)
        await delete_dataset(deleting, found)
        await ingest.rollback()


async def test_an_ingest_that_waited_for_a_delete_writes_into_a_new_dataset(db):
    old = await _make(db, "web")
    async with db() as deleting:
        await delete_dataset_uncommitted(deleting)
        async with db() as ingest:
            # It reads the old id (the delete has not committed), then waits for the delete's lock.
            held = asyncio.ensure_future(hold_or_create(ingest, "web"))
            await asyncio.sleep(WAIT)
            assert not held.done()
            await deleting.commit()
            new, created = await asyncio.wait_for(held, 10)
            assert created and new != old
            await ingest.commit()


@pytest.mark.parametrize("hold", ["shared", "exclusive"])
async def test_a_dataset_deleted_while_waiting_is_not_found(db, hold):
    """A change (shared) or a second delete (exclusive) that waited for a delete answers 404, not a dataset that
    is gone."""
    await _make(db, "web")
    async with db() as deleting:
        await delete_dataset_uncommitted(deleting)
        async with db() as s:
            waiting = asyncio.ensure_future(get_dataset(s, "web", ADMIN, hold=hold))
            await asyncio.sleep(WAIT)
            assert not waiting.done()
            await deleting.commit()
            with pytest.raises(BeaconError) as raised:
                await asyncio.wait_for(waiting, 10)
            assert raised.value.code == "not_found"


async def delete_dataset_uncommitted(s) -> None:
    """What delete_dataset does, up to its commit."""
    ds = await get_dataset(s, "web", ADMIN, hold="exclusive")
    for table in ("events", "event_rollups", "dataset_fields", "datasets"):
        column = "id" if table == "datasets" else "dataset_id"
        await s.execute(text(f"DELETE FROM {table} WHERE {column} = :id"), {"id": ds.id})

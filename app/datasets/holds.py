"""Holding a dataset for the rest of a transaction, by its id, with an advisory lock (app/db/advisory.py).

Shared: ingest (its events, fields and counts must not outlive a delete) and a change of its settings; exclusive:
its deletion and retention's deletes. This is what the row locks on `datasets` did (KEY SHARE, NO KEY UPDATE,
UPDATE); on Citus, where `datasets` is a reference table, a row lock would lock every dataset.

The id is read first, without a lock, and the row read again once the lock is held: a delete that committed
in between is seen then (a new statement sees what committed before it), and the name is looked up again (it
may have been made anew, with another id).
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.advisory import Space, lock
from app.errors import BeaconError

_ID = text("SELECT id FROM datasets WHERE name = :name")
_STILL_THERE = text("SELECT 1 FROM datasets WHERE id = :id")
_INSERT = text("INSERT INTO datasets (name) VALUES (:name) ON CONFLICT (name) DO NOTHING RETURNING id")
ATTEMPTS = 3


async def hold_id(session: AsyncSession, dataset_id: int, *, shared: bool) -> bool:
    """Lock the dataset with this id; False when it is gone by the time the lock is held."""
    await lock(session, Space.DATASET, dataset_id, shared=shared)
    return (await session.execute(_STILL_THERE, {"id": dataset_id})).scalar_one_or_none() is not None


async def hold(session: AsyncSession, name: str, *, shared: bool) -> int | None:
    """The id of the dataset named `name`, held; None when there is none."""
    for _ in range(ATTEMPTS):
        found = (await session.execute(_ID, {"name": name})).scalar_one_or_none()
        if found is None:
            return None
        if await hold_id(session, int(found), shared=shared):
            return int(found)
    raise _busy(name)


async def hold_or_create(session: AsyncSession, name: str) -> tuple[int, bool]:
    """The dataset's id, held shared (made in this transaction when there is none), and whether it was made.
    A dataset made here needs no lock: no other transaction sees it before this one commits."""
    for _ in range(ATTEMPTS):
        found = await hold(session, name, shared=True)
        if found is not None:
            return found, False
        created = (await session.execute(_INSERT, {"name": name})).scalar_one_or_none()
        if created is not None:
            return int(created), True
    raise _busy(name)


def _busy(name: str) -> BeaconError:
    return BeaconError("conflict", f"The dataset {name!r} is being deleted; retry the request.")

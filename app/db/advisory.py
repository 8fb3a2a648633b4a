"""Advisory locks in place of row locks on the tables Citus makes reference tables (app/db/citus_plan.py).

On a reference table Citus turns a row lock (FOR UPDATE, FOR SHARE, ...) into a lock on the whole table, on every
node, until commit: two ingests into different datasets deadlocked on `FOR KEY SHARE` of their dataset rows
(issue 32). An advisory lock is per key and lives on the node the session is connected to, the coordinator,
whatever the table's kind; it is taken in a statement of its own that names no table, so Citus runs it there.

The key space. PostgreSQL keeps advisory locks on one bigint key and those on two integer keys apart: they never
conflict. The one-key locks Beacon took before stay as they were (token bootstrap `hashtext('beacon-bootstrap-
token')`, the retention pass `hashtext('beacon-retention')`, rate limits `hashtextextended('beacon-rate-limit:'
|| key, 0)`, which spread over the whole bigint range). Every other lock takes two keys: the first is its `Space`
below, the second the object's id (a dataset's integer id; a text id's CRC-32), so a lock of one kind can never
be taken for another's. Two text ids with one CRC share a lock: that only makes one wait for, or skip, the other.

Like the row locks they replace, the locks are transaction-level: they end with the transaction.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from enum import IntEnum

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession


class Space(IntEnum):
    PARTITION_DAY = 0x0B7A0001  # app/ingest/partitions.py: creating one day's partition of events
    DATASET = 0x0B7A0002  # shared: ingest, patch (the dataset stays); exclusive: delete, retention's deletes
    MONITOR = 0x0B7A0003  # exclusive: an evaluation (try-lock in the loop), update, delete
    NOTIFIER = 0x0B7A0004  # exclusive: update, delete, an import replacing it
    SILENCE = 0x0B7A0005  # exclusive: update, expire, a rollout ending it
    TOKEN = 0x0B7A0006  # shared: making a child of the token; exclusive: revoking it
    ROUTING = 0x0B7A0007  # exclusive, key 1: replacing the routing document


def key_of(object_id: int | str) -> int:
    """The second key for an object: an integer id as it is, a text id's CRC-32 as a signed 32-bit integer."""
    if isinstance(object_id, int):
        return object_id
    crc = zlib.crc32(object_id.encode())
    return crc - (1 << 32) if crc >= 1 << 31 else crc


_FUNCTIONS = {
    (False, False): "pg_advisory_xact_lock",
    (False, True): "pg_advisory_xact_lock_shared",
    (True, False): "pg_try_advisory_xact_lock",
    (True, True): "pg_try_advisory_xact_lock_shared",
}


async def lock(
    db: AsyncSession | asyncpg.Connection, space: Space, object_id: int | str, *, shared: bool = False
) -> None:
    """Wait for the lock on the object, held until the transaction ends (lock_timeout applies)."""
    function = _FUNCTIONS[False, shared]
    if isinstance(db, AsyncSession):
        await db.execute(text(f"SELECT {function}(:space, :key)"), {"space": int(space), "key": key_of(object_id)})
    else:
        await db.execute(f"SELECT {function}($1, $2)", int(space), key_of(object_id))


async def lock_all(db: AsyncSession | asyncpg.Connection, space: Space, object_ids: Iterable[int | str]) -> None:
    """Exclusive locks on several objects, taken in key order so that two takers never deadlock."""
    for key in sorted({key_of(i) for i in object_ids}):
        await lock(db, space, key)


_TRY_MANY = text(
    "SELECT i.id FROM unnest(CAST(:ids AS text[]), CAST(:keys AS integer[])) WITH ORDINALITY AS i(id, k, n)"
    " WHERE pg_try_advisory_xact_lock(:space, i.k) ORDER BY i.n"
)


async def try_lock_many(session: AsyncSession, space: Space, object_ids: list[str]) -> list[str]:
    """Of `object_ids`, those whose exclusive lock this transaction got now (one round trip, no waiting: the
    others are held elsewhere), in the order given. What SKIP LOCKED did for row locks."""
    params = {"ids": object_ids, "keys": [key_of(i) for i in object_ids], "space": int(space)}
    return list((await session.execute(_TRY_MANY, params)).scalars())

"""Leases: how a worker holds the rows it claimed while no transaction is open, and keeps them while it needs them.

A claim leases due rows (`claimed_until`, `claim_token`); every write about a row afterwards (its outcome, giving it
back, extending the lease) applies only where the token is still the claim's. The process keeps its own, cautious
view of each lease (`Claimed.deadline`, on its monotonic clock): the time before the statement that set the lease,
plus its length. The database's `claimed_until` is the same length counted from a later moment (the statement's
start), so no other process can take the row before that deadline, whatever the clocks of the two machines say.

While a process holds rows (claimed and waiting for a slot, being sent, or sent with their outcome not written
yet), the `LeaseKeeper` extends their leases every quarter lease; a row whose lease another process took over
meanwhile (this one could not reach the database for longer than the lease) is marked `lost` and not sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import autocommit_connection
from app.deliveries import streams

if TYPE_CHECKING:
    from app.deliveries.sending import Plan

log = logging.getLogger("beacon.deliveries")


class Lease(NamedTuple):
    """A row the claim leased (the columns CLAIM_DUE and CLAIM_UNMUTED return)."""

    id: str
    notifier_id: str
    kind: str
    event: Any
    attempts: int
    max_attempts: int
    claimed_until: datetime
    deferred: bool


@dataclass(eq=False)
class Claimed:
    """A leased row ready to send, as long as this process holds it."""

    delivery_id: str
    notifier_id: str
    token: str
    attempts: int  # before this one
    max_attempts: int
    plan: Plan
    claimed_at: float  # monotonic, just before the claim's statement
    deadline: float  # monotonic: no other process can take the row before then (extended by the LeaseKeeper)
    lost: bool = field(default=False)  # its lease lapsed and another process may have it: never sent from here
    sent: bool = field(default=False)  # its send has ended (its outcome is being recorded)


_DUE, _OPEN = streams.sql_list(streams.DUE), streams.sql_list(streams.OPEN)
_LEASE = """
UPDATE deliveries d SET claimed_until = now() + make_interval(secs => $3), claim_token = $4
FROM picked WHERE d.id = picked.id
RETURNING d.id, d.notifier_id, d.kind, d.event, d.attempts, d.max_attempts, d.claimed_until"""
# Lease the due stream heads, oldest due first, at most $5 per notifier (the rest are left to other processes),
# skipping the rows other processes hold and the destinations whose share of this process is queued already.
# The window needs a subquery without the lock; the lock's own query checks the row again.
CLAIM_DUE = f"""
WITH candidates AS (
    SELECT c.id FROM (
        SELECT d.id, row_number() OVER (PARTITION BY d.notifier_id ORDER BY d.next_attempt_at) AS nth
        FROM (
            SELECT d.id, d.notifier_id, d.next_attempt_at FROM deliveries d
            WHERE d.status IN {_DUE} AND d.next_attempt_at <= now()
              AND (d.claimed_until IS NULL OR d.claimed_until < now())
              AND d.notifier_id <> ALL($1::text[])
              AND {streams.IS_HEAD}
            ORDER BY d.next_attempt_at
            LIMIT $2 * 4
        ) d
    ) c WHERE c.nth <= $5
), picked AS (
    SELECT d.id FROM deliveries d
    WHERE d.id IN (SELECT id FROM candidates)
      AND d.status IN {_DUE} AND d.next_attempt_at <= now()
      AND (d.claimed_until IS NULL OR d.claimed_until < now())
    ORDER BY d.next_attempt_at
    LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
){_LEASE}, false AS deferred
"""
# Lease the deferred stream heads whose notifier's mute has ended (or was lifted early): they are due whatever
# their `next_attempt_at` (the mute's end when it was deferred).
CLAIM_UNMUTED = f"""
WITH picked AS (
    SELECT d.id FROM deliveries d
    WHERE d.status = 'deferred'
      AND (d.claimed_until IS NULL OR d.claimed_until < now())
      AND d.notifier_id <> ALL($1::text[])
      AND NOT EXISTS (SELECT 1 FROM notifiers n WHERE n.id = d.notifier_id AND n.disabled_until > now())
      AND {streams.IS_HEAD}
    ORDER BY d.seq
    LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
){_LEASE}, true AS deferred
"""
# Give leases back, each only where it is still ours.
RELEASE = """
UPDATE deliveries d SET claimed_until = NULL, claim_token = NULL
FROM unnest($1::text[], $2::text[]) AS v(id, token)
WHERE d.id = v.id AND d.claim_token = v.token
"""
# Give back whatever one claim leased, when the claim's answer was lost with its connection (it may have committed):
# the open rows, through their partial indexes.
RELEASE_CLAIM = f"""
UPDATE deliveries d SET claimed_until = NULL, claim_token = NULL WHERE d.status IN {_OPEN} AND d.claim_token = $1
"""
# Extend leases, each only where it is still ours; returns the rows extended.
EXTEND = """
UPDATE deliveries d SET claimed_until = now() + make_interval(secs => $3)
FROM unnest($1::text[], $2::text[]) AS v(id, token)
WHERE d.id = v.id AND d.claim_token = v.token
RETURNING d.id
"""


async def release(engine: AsyncEngine, rows: Iterable[tuple[str, str]]) -> None:
    """Give back the leases of claimed rows not sent, by (delivery id, claim token), so that no process need wait
    them out (best effort: when the database cannot be reached, they run out)."""
    rows = list(rows)
    if not rows:
        return
    try:
        async with autocommit_connection(engine) as conn:
            await conn.execute(RELEASE, [r[0] for r in rows], [r[1] for r in rows])
    except Exception:
        log.warning("giving back %d claimed deliveries failed; their leases run out", len(rows), exc_info=True)


async def release_claim(engine: AsyncEngine, token: str) -> None:
    try:
        async with autocommit_connection(engine) as conn:
            await conn.execute(RELEASE_CLAIM, token)
    except Exception:
        log.warning("giving back a failed claim's rows failed; their leases run out", exc_info=True)


class LeaseKeeper:
    """The rows this process holds, by delivery id, and the task that extends their leases while there are any."""

    def __init__(self, engine: AsyncEngine, lease_seconds: float) -> None:
        self.engine = engine
        self.lease_seconds = lease_seconds
        self.held: dict[str, Claimed] = {}
        self._task: asyncio.Task[None] | None = None
        self._emptied = asyncio.Event()

    def hold(self, rows: Iterable[Claimed]) -> None:
        for c in rows:
            self.held[c.delivery_id] = c
        if self.held:
            self._emptied.clear()  # also when the task is running: it may have seen the set held empty a moment ago
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._keep())

    def drop(self, claimed: Claimed) -> None:
        if self.held.get(claimed.delivery_id) is claimed:
            del self.held[claimed.delivery_id]
            if not self.held:
                self._emptied.set()

    async def _keep(self) -> None:
        period = self.lease_seconds / 4
        while self.held:
            try:
                await asyncio.wait_for(self._emptied.wait(), period)
            except TimeoutError:
                await self.extend()

    async def extend(self) -> None:
        """Extend every held row's lease; a row no longer ours is marked lost."""
        rows = list(self.held.values())
        if not rows:
            return
        started = time.monotonic()
        try:
            async with autocommit_connection(self.engine) as conn:
                found = await conn.fetch(
                    EXTEND, [c.delivery_id for c in rows], [c.token for c in rows], self.lease_seconds
                )
        except Exception:
            # The deadlines stay as they were: sends that could outlive them are not started (worker.py).
            log.warning("extending the leases of %d deliveries failed; trying again", len(rows), exc_info=True)
            return
        extended = {r["id"] for r in found}
        for c in rows:
            if c.delivery_id in extended:
                c.deadline = max(c.deadline, started + self.lease_seconds)
            elif self.held.get(c.delivery_id) is c:
                # Not recorded meanwhile (that drops it), yet no longer ours: another process may send it now.
                c.lost = True
                self.drop(c)
                if not c.sent:
                    log.warning("delivery %s: its lease ran out before it was sent; not sent here", c.delivery_id)

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

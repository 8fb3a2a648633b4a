"""Recording the outcomes of the worker's sends: in batches, one statement each, until the database takes them.

An outcome is written as soon as the send ends (while a write is under way, the outcomes that end meanwhile go in
the next one), each only if the row's lease is still the claim's. A write that fails because the database dropped
the connection, or cannot be reached, is tried again on a new connection until it succeeds, the leases kept
meanwhile (app/deliveries/leases.py): the message was sent, and a row left to its lease would be sent again. A
write whose answer was lost may have committed: trying it again changes nothing (the lease token is gone), and the
row is reported as not recorded here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

import asyncpg

from adapters.contract import DeliveryResult
from app.db.engine import autocommit_connection
from app.db.unavailable import database_unavailable
from app.deliveries import streams
from app.deliveries.leases import Claimed
from app.deliveries.sending import ERROR_LIMIT, DeliveryEnv, observe, outcome_of
from app.notifiers.service import DISABLED_FOR_GOOD, gone_reason
from app.timefmt import utcnow

log = logging.getLogger("beacon.deliveries")

# Backoff between tries of a failed write (seconds); a failure that is not the connection's is tried this many times.
RETRY_FIRST, RETRY_MAX, OTHER_FAILURE_TRIES = 0.05, 1.0, 3

_OPEN = streams.sql_list(streams.OPEN)
# Each outcome and its attempt, only where the lease is still ours, and the notifiers whose endpoint said it is
# gone disabled; one statement (the attempts are inserted for the rows the update kept).
RECORD = f"""
WITH v AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::int[], $7::text[],
                         $8::timestamptz[], $9::int[], $10::bool[], $11::bool[], $12::text[], $13::text[])
        AS v(id, token, status, attempts, started, response_status, error, next_at, duration_ms, ok, retryable,
             attempt_error, gone)
), kept AS (
    UPDATE deliveries d
    SET status = v.status, attempts = v.attempts, last_attempt_at = v.started, response_status = v.response_status,
        error = v.error, next_attempt_at = v.next_at, updated_at = now(), claimed_until = NULL, claim_token = NULL
    FROM v
    WHERE d.id = v.id AND d.claim_token = v.token
    RETURNING d.id, d.notifier_id, EXISTS (
        SELECT 1 FROM deliveries e WHERE e.stream = d.stream AND e.seq > d.seq AND e.status IN {_OPEN}) AS has_next
), logged AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, ok, retryable, response_status, error)
    SELECT v.id, v.attempts, v.started, v.duration_ms, v.ok, v.retryable, v.response_status, v.attempt_error
    FROM v JOIN kept ON kept.id = v.id
), disabled AS (
    UPDATE notifiers n SET disabled_until = $14, disabled_reason = g.gone, updated_at = now()
    FROM (
        SELECT DISTINCT ON (kept.notifier_id) kept.notifier_id, v.gone FROM v JOIN kept ON kept.id = v.id
        WHERE v.gone IS NOT NULL ORDER BY kept.notifier_id
    ) g
    WHERE n.id = g.notifier_id AND n.disabled_until IS DISTINCT FROM $14
    RETURNING n.id
)
SELECT id, has_next, notifier_id IN (SELECT id FROM disabled) AS disabled FROM kept
"""


class Recorded(NamedTuple):
    """What became of an outcome: when the row is due again (a retry; None: it is over), whether its stream may
    have a next message, and whether this write recorded it."""

    next_at: datetime | None
    has_next: bool
    kept: bool


@dataclass
class Sent:
    claimed: Claimed
    result: DeliveryResult
    started: datetime
    duration_ms: int
    recorded: asyncio.Future[Recorded]


def _retryable(exc: BaseException) -> bool:
    return database_unavailable(exc) or isinstance(exc, asyncpg.InterfaceError)


class Recorder:
    """One per dispatcher: the outcomes waiting to be written and the task writing them. `on_disabled` hears of the
    notifiers a write disabled (their endpoint is gone)."""

    def __init__(self, env: DeliveryEnv, on_disabled: Callable[[set[str]], None]) -> None:
        self.env = env
        self.engine = env.sessionmaker.kw["bind"]
        self.on_disabled = on_disabled
        self._outcomes: list[Sent] = []
        self.task: asyncio.Task[None] | None = None

    def add(self, sent: Sent) -> None:
        self._outcomes.append(sent)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        """Write batches while outcomes come in, on one connection while they keep coming; after a failure, again on
        a new connection with what came in meanwhile, until the batch is taken (a failure that is not the
        connection's: a few times, then its rows are left to their leases)."""
        batch: list[Sent] = []
        delay, others, retried = RETRY_FIRST, 0, False
        while batch or self._outcomes:
            try:
                async with autocommit_connection(self.engine) as conn:
                    while True:
                        batch += self._outcomes
                        self._outcomes = []
                        if not batch:
                            break  # and look again once the connection is back in the pool
                        self._resolve(batch, await self._write(conn, batch, retried=retried))
                        batch, delay, others, retried = [], RETRY_FIRST, 0, False
            except Exception as exc:
                if not _retryable(exc):
                    others += 1
                    if others >= OTHER_FAILURE_TRIES:
                        # Their leases run out and the rows are claimed again: sent twice rather than never.
                        log.exception("recording %d delivery outcomes failed; their leases run out", len(batch))
                        self._resolve(batch, {s.claimed.delivery_id: Recorded(None, True, False) for s in batch})
                        batch, delay, others, retried = [], RETRY_FIRST, 0, False
                        continue
                if not retried:
                    log.warning("recording %d delivery outcomes failed (%s); trying again", len(batch), exc)
                retried = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    @staticmethod
    def _resolve(batch: list[Sent], done: dict[str, Recorded]) -> None:
        for outcome in batch:
            if not outcome.recorded.done():
                outcome.recorded.set_result(done[outcome.claimed.delivery_id])

    async def _write(self, conn: asyncpg.Connection, batch: list[Sent], *, retried: bool) -> dict[str, Recorded]:
        """One statement for the batch, each row only if its lease is still ours."""
        env, now = self.env, utcnow()
        results = [
            outcome_of(env, s.claimed.attempts + 1, s.claimed.max_attempts, s.result, s.started, s.duration_ms)
            for s in batch
        ]
        rows = await conn.fetch(
            RECORD,
            [s.claimed.delivery_id for s in batch],
            [s.claimed.token for s in batch],
            [o.status for o in results],
            [s.claimed.attempts + 1 for s in batch],
            [s.started for s in batch],
            [s.result.status for s in batch],
            [o.error for o in results],
            [o.next_attempt_at for o in results],
            [s.duration_ms for s in batch],
            [s.result.ok for s in batch],
            [s.result.retryable for s in batch],
            [None if s.result.ok else (s.result.detail or "failed")[:ERROR_LIMIT] for s in batch],
            [gone_reason(s.claimed.delivery_id, now) if s.result.gone else None for s in batch],
            DISABLED_FOR_GOOD,
        )
        kept = {r["id"]: r["has_next"] for r in rows}
        notifier_of = {s.claimed.delivery_id: s.claimed.notifier_id for s in batch}
        disabled = {notifier_of[r["id"]] for r in rows if r["disabled"]}
        done: dict[str, Recorded] = {}
        for sent, outcome in zip(batch, results, strict=True):
            c = sent.claimed
            if c.delivery_id in kept:
                observe(env, c.delivery_id, c.notifier_id, c.plan.adapter.type, outcome, sent.duration_ms / 1000)
                done[c.delivery_id] = Recorded(outcome.next_attempt_at, kept[c.delivery_id], True)
                continue
            # Its stream's next message may be due now, and a retry may be timed: look (a claim that finds nothing).
            done[c.delivery_id] = Recorded(outcome.next_attempt_at, True, False)
            if retried:
                log.info("delivery %s: recorded by a write whose answer was lost, or no longer ours", c.delivery_id)
            else:
                log.warning("delivery %s: its lease ran out during the send; not recorded", c.delivery_id)
        if disabled:
            self.on_disabled(disabled)
        return done

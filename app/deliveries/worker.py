"""The delivery worker: in every server process, a dispatcher claims due deliveries and sends them concurrently.

No transaction is open during a send. A claim is one short transaction: due stream heads are locked with
`FOR UPDATE SKIP LOCKED` and leased (`claimed_until`, `claim_token`) in one statement, and prepared (notifier,
mute, pacing: the rare cases through `sending.prepare`); the send follows outside any transaction, and outcomes
are recorded in batches in another short transaction, each only if its lease is still ours. Any number of
processes share the queue without sending a row twice as long as a send ends within the lease
(`delivery_lease_seconds`, well above the HTTP timeout); a process killed mid-send leaves its rows leased until
the lease runs out, then they are claimed again (at least once, never lost).

Only the head of each stream is claimable (app/deliveries/streams.py), so a stream's messages go one at a
time, in order. A process has `delivery_concurrency` sends in flight at most, and `delivery_per_destination`
per notifier, so a hanging destination holds a few slots and the others keep flowing. Claims run ahead of the
sends (claimed rows wait in a per-destination queue), so a destination's next send does not wait for a claim's
round trip; a row that waited half its lease for a slot is given back (its lease cleared) to be claimed again.

In a server, `serve` runs the dispatcher in the background: the scheduler's poll and the monitors' and
routing's wake-ups start claims; a finished send claims again when its stream has a next message or its
destination's queue runs low, and a retry, a paced message or a mute claims again at its time (one timer per
process, for the earliest). Without a server (tests, tools), `deliver_due` sends what is due and waits for it.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import secrets
import time
from collections import Counter, deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from adapters.base import DeliveryResult
from adapters.http import HttpSender
from app.db.delivery import Delivery
from app.db.engine import driver_connection, make_engine, make_sessionmaker
from app.db.notifier import Notifier
from app.deliveries import streams
from app.deliveries.sending import (
    ERROR_LIMIT,
    DeliveryEnv,
    Destination,
    Plan,
    observe,
    outcome_of,
    prepare,
    reusable,
    send_once,
)
from app.notifiers.service import build_notifier_env
from app.settings import Settings
from app.timefmt import utcnow

log = logging.getLogger("beacon.deliveries")
CLAIM_BATCH = 64
# A timer further out than this is not set: the scheduler's poll finds the row anyway.
MAX_TIMER_SECONDS = 3600.0


@dataclass(frozen=True)
class Claimed:
    delivery_id: str
    notifier_id: str
    token: str
    lease_until: datetime
    attempts: int  # before this one
    max_attempts: int
    plan: Plan


# When a recorded delivery is due again (a retry; None: it is over), and whether its stream has a next message.
Recorded = tuple[datetime | None, bool]


@dataclass
class Sent:
    claimed: Claimed
    result: DeliveryResult
    started: datetime
    duration_ms: int
    # Resolved once recorded: when the delivery is due again (a retry), else None.
    recorded: asyncio.Future[Recorded]


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
# Each outcome and its attempt, only where the lease is still ours; one statement (the attempts are inserted for
# the rows the update kept).
RECORD = f"""
WITH v AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::int[], $7::text[],
                         $8::timestamptz[], $9::int[], $10::bool[], $11::bool[], $12::text[])
        AS v(id, token, status, attempts, started, response_status, error, next_at, duration_ms, ok, retryable,
             attempt_error)
), kept AS (
    UPDATE deliveries d
    SET status = v.status, attempts = v.attempts, last_attempt_at = v.started, response_status = v.response_status,
        error = v.error, next_attempt_at = v.next_at, updated_at = now(), claimed_until = NULL, claim_token = NULL
    FROM v
    WHERE d.id = v.id AND d.claim_token = v.token
    RETURNING d.id, EXISTS (
        SELECT 1 FROM deliveries e WHERE e.stream = d.stream AND e.seq > d.seq AND e.status IN {_OPEN}) AS has_next
), logged AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, ok, retryable, response_status, error)
    SELECT v.id, v.attempts, v.started, v.duration_ms, v.ok, v.retryable, v.response_status, v.attempt_error
    FROM v JOIN kept ON kept.id = v.id
)
SELECT id, has_next FROM kept
"""
# Give leases back, each only where it is still ours.
RELEASE = """
UPDATE deliveries d SET claimed_until = NULL, claim_token = NULL
FROM unnest($1::text[], $2::text[]) AS v(id, token)
WHERE d.id = v.id AND d.claim_token = v.token
"""


class Dispatcher:
    """One per process: the sends in flight, the claimed rows waiting for a slot, the outcomes to record."""

    def __init__(self, env: DeliveryEnv) -> None:
        self.env = env
        self.capacity = max(1, env.settings.delivery_concurrency)
        self.per_destination = max(1, env.settings.delivery_per_destination)
        # A destination's queue is refilled when it holds less than two rounds of its sends: the claim's round
        # trip (slower under load) must end before the queue runs dry.
        self.refill_below = 2 * self.per_destination
        self.sending: Counter[str] = Counter()  # notifier id -> sends in flight
        self.queued: dict[str, deque[Claimed]] = {}  # notifier id -> claimed, waiting for a slot
        self.tasks: set[asyncio.Task[None]] = set()
        self._a_task_ended = asyncio.Event()
        self.attempted = 0
        self.serving = False
        self._pumping = False
        self._again = False
        self._pump_task: asyncio.Task[None] | None = None
        self._due: list[float] = []  # a heap of the loop times at which rows fall due here (retries, pacing, mutes)
        self._timer: asyncio.TimerHandle | None = None  # set for the earliest of them
        self._outcomes: list[Sent] = []
        self._recorder: asyncio.Task[None] | None = None
        self._claim_wanted = False

    def _waiting(self, notifier_id: str | None = None) -> int:
        if notifier_id is None:
            return sum(len(q) for q in self.queued.values())
        return len(self.queued.get(notifier_id, ()))

    # -- claiming -------------------------------------------------------------------------------------------

    async def pump(self, room: int | None = None) -> int:
        """Claim due deliveries while there is room and start sending them; returns how many were claimed.

        Claims run ahead of the sends (a destination's queue is refilled while it still holds two rounds of its
        sends), so the sends do not wait for the claim's round trip."""
        claimed_total, with_deferred = 0, True
        while True:
            # A destination's queue counts only up to its share: one that hangs holds no room from the others.
            queued = sum(min(len(q), self.refill_below) for q in self.queued.values())
            free = 2 * self.capacity - sum(self.sending.values()) - queued
            if room is not None:
                free = min(free, room - claimed_total)
            if free <= 0:
                return claimed_total
            claimed, more = await self._claim(min(free, CLAIM_BATCH), with_deferred=with_deferred)
            with_deferred = False
            for c in claimed:
                self.queued.setdefault(c.notifier_id, deque()).append(c)
            claimed_total += len(claimed)
            self._dispatch()
            if not more:
                return claimed_total

    async def _claim(self, limit: int, *, with_deferred: bool) -> tuple[list[Claimed], bool]:
        """One short transaction: lease up to `limit` stream heads that are due (and, `with_deferred`, whose
        mute has ended) and prepare them. Returns the sends to make and whether another claim may find more."""
        env = self.env
        busy = [n for n in {*self.sending, *self.queued} if self._waiting(n) >= self.refill_below]
        token = secrets.token_hex(8)
        lease = env.settings.delivery_lease_seconds
        async with env.sessionmaker() as session:
            conn = await driver_connection(session)
            per_notifier = self.per_destination + self.capacity  # a round in flight, a queue as deep as the slots
            leased = [Lease(*r.values()) for r in await conn.fetch(CLAIM_DUE, busy, limit, lease, token, per_notifier)]
            if with_deferred and len(leased) < limit:
                leased += [
                    Lease(*r.values()) for r in await conn.fetch(CLAIM_UNMUTED, busy, limit - len(leased), lease, token)
                ]
            if not leased:
                return [], False
            claimed: list[Claimed] = []
            settled = 0
            # Per notifier, the destination its first row's `prepare` made: the claim's other rows for it send
            # through it, so each claim reads and unseals a notifier once. A deferred row always settles its
            # stream in `prepare`.
            destinations: dict[str, Destination] = {}
            for row in leased:
                destination = None if row.deferred else destinations.get(row.notifier_id)
                if destination is not None:
                    plan = destination.plan(env, row.id, row.event)
                else:
                    delivery = await session.get(Delivery, row.id)
                    assert delivery is not None
                    prepared = await prepare(session, env, delivery, await session.get(Notifier, row.notifier_id))
                    if isinstance(prepared, str):
                        settled += 1
                        delivery.claimed_until = delivery.claim_token = None
                        if delivery.next_attempt_at is not None and delivery.status != "superseded":
                            self._wake_at(delivery.next_attempt_at)
                        continue
                    plan = prepared
                    if reusable(plan, row.kind):
                        destinations.setdefault(row.notifier_id, plan.destination)
                claimed.append(
                    Claimed(row.id, row.notifier_id, token, row.claimed_until, row.attempts, row.max_attempts, plan)
                )
            await session.commit()
        # More may be due: a full batch, or a stream whose head was settled (its next message is now the head).
        return claimed, len(leased) == limit or settled > 0

    # -- sending --------------------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Start the claimed sends that have a slot: free in the process and in their destination's share."""
        in_flight = sum(self.sending.values())
        margin = timedelta(seconds=self.env.settings.delivery_lease_seconds / 2)
        stale: list[Claimed] = []
        for notifier_id in list(self.queued):
            waiting = self.queued[notifier_id]
            while waiting and in_flight < self.capacity and self.sending[notifier_id] < self.per_destination:
                claimed = waiting.popleft()
                if claimed.lease_until - utcnow() < margin:
                    # Waited half its lease for a slot: the send might outlive the lease; given back to be claimed
                    # again (here or elsewhere).
                    log.warning("delivery %s: lease too short to send now; it is claimed again", claimed.delivery_id)
                    stale.append(claimed)
                    continue
                self.sending[notifier_id] += 1
                in_flight += 1
                task = asyncio.create_task(self._send(claimed))
                self._track(task)
            if not waiting:
                del self.queued[notifier_id]
        if stale:
            task = asyncio.create_task(self._release(stale))
            self._track(task)

    def _track(self, task: asyncio.Task[None]) -> None:
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self._a_task_ended.set()

    async def _send(self, claimed: Claimed) -> None:
        try:
            started, clock = utcnow(), time.monotonic()
            result = await send_once(claimed.plan.adapter, claimed.plan.event)
            duration_ms = int((time.monotonic() - clock) * 1000)
        finally:
            self.sending[claimed.notifier_id] -= 1
            if self.sending[claimed.notifier_id] <= 0:
                del self.sending[claimed.notifier_id]
            self._dispatch()  # the destination's next claimed message goes now
        if self._waiting(claimed.notifier_id) < self.refill_below:
            self._want_claim()  # refill the destination's queue while its sends go on
        recorded: asyncio.Future[Recorded] = asyncio.get_running_loop().create_future()
        self._outcomes.append(Sent(claimed, result, started, duration_ms, recorded))
        if self._recorder is None or self._recorder.done():
            self._recorder = asyncio.create_task(self._record_all())
        next_at, has_next = await recorded
        self.attempted += 1
        if next_at is not None:
            self._wake_at(next_at)
        if has_next:
            self._want_claim()  # the stream's next message is its head now

    def _want_claim(self) -> None:
        """Claim again soon (not after every send: a claim that finds nothing still costs a round trip)."""
        self._claim_wanted = True
        self.wake()

    async def _record_all(self) -> None:
        """Record outcomes in batches: every outcome that came in during a write goes in the next one."""
        while self._outcomes:
            batch, self._outcomes = self._outcomes, []
            try:
                due_again = await self._write(batch)
            except Exception:
                # Their leases run out and the rows are claimed again: sent twice rather than never.
                log.exception("recording %d delivery outcomes failed", len(batch))
                due_again = {}
            for outcome in batch:
                if not outcome.recorded.done():
                    outcome.recorded.set_result(due_again.get(outcome.claimed.delivery_id, (None, False)))

    async def _write(self, batch: list[Sent]) -> dict[str, Recorded]:
        """One statement for the batch, each row only if its lease is still ours; returns when each is due
        again and whether its stream has a next message."""
        env, now = self.env, utcnow()
        results = [outcome_of(env, s.claimed.attempts + 1, s.claimed.max_attempts, s.result, now) for s in batch]
        async with env.sessionmaker() as session:
            conn = await driver_connection(session)
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
            )
            await session.commit()
        kept = {r["id"]: r["has_next"] for r in rows}
        mine = [(s, o) for s, o in zip(batch, results, strict=True) if s.claimed.delivery_id in kept]
        for s in (s for s in batch if s.claimed.delivery_id not in kept):
            log.warning("delivery %s: its lease ran out during the send; not recorded", s.claimed.delivery_id)
        for sent, done in mine:
            c = sent.claimed
            observe(env, c.delivery_id, c.notifier_id, c.plan.adapter.type, done, sent.duration_ms / 1000)
        return {s.claimed.delivery_id: (o.next_attempt_at, kept[s.claimed.delivery_id]) for s, o in mine}

    # -- running --------------------------------------------------------------------------------------------

    def wake(self) -> None:
        """Claim again soon, in the background (server mode only); coalesces while a claim runs."""
        if not self.serving:
            return
        if self._pumping:
            self._again = True
            return
        self._pumping = True
        self._pump_task = asyncio.create_task(self._pump_loop())

    async def _pump_loop(self) -> None:
        try:
            while True:
                self._again = False
                try:
                    await self.pump()
                except Exception:
                    log.exception("delivery claim failed; the worker's poll tries again")
                if not self._again or not self.serving:
                    return
        finally:
            self._pumping = False

    def _wake_at(self, when: datetime) -> None:
        """Claim again at `when` (a retry, a paced message, a mute's end). One timer, for the earliest time:
        when it fires it is set for the next."""
        if not self.serving:
            return
        delay = (when - utcnow()).total_seconds()
        if delay > MAX_TIMER_SECONDS:
            return
        loop = asyncio.get_running_loop()
        at = loop.time() + max(delay, 0.0) + 0.005
        heapq.heappush(self._due, at)
        if self._timer is None or at < self._timer.when():
            self._set_timer(loop)

    def _set_timer(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(self._due[0], self._on_timer) if self._due else None

    def _on_timer(self) -> None:
        loop = asyncio.get_running_loop()
        while self._due and self._due[0] <= loop.time():
            heapq.heappop(self._due)
        self._timer = None
        self._set_timer(loop)
        self.wake()

    async def run_due(self, limit: int) -> int:
        """Send what is due now and wait for it (no server): returns the number of attempts made."""
        before = self.attempted
        self._claim_wanted = True
        while True:
            if self._claim_wanted:
                self._claim_wanted = False
                made = self.attempted - before
                await self.pump(room=limit - made - len(self.tasks) - self._waiting())
            if not self.tasks:
                if self._claim_wanted:
                    continue
                return self.attempted - before
            # Until one of them ends (cheaper than asyncio.wait, which hooks into every task on every call).
            self._a_task_ended.clear()
            await self._a_task_ended.wait()

    async def stop(self, grace: float) -> None:
        """Shutdown: claim nothing more and let the sends in flight finish (then record them)."""
        self.serving = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due.clear()
        await self._release_queued()
        pending = {t for t in (*self.tasks, self._pump_task, self._recorder) if t is not None and not t.done()}
        if pending:
            _, late = await asyncio.wait(pending, timeout=grace)
            for task in late:
                task.cancel()  # its lease runs out and another process sends it

    async def _release_queued(self) -> None:
        waiting = [c for q in self.queued.values() for c in q]
        self.queued.clear()
        if waiting:
            await self._release(waiting)

    async def _release(self, waiting: list[Claimed]) -> None:
        """Give back the leases of claimed rows not sent, so another process need not wait them out."""
        try:
            async with self.env.sessionmaker() as session:
                conn = await driver_connection(session)
                await conn.execute(RELEASE, [c.delivery_id for c in waiting], [c.token for c in waiting])
                await session.commit()
        except Exception:
            log.exception("releasing %d claimed deliveries failed; their leases run out", len(waiting))


def dispatcher_of(app_state: Any) -> Dispatcher:
    """The process's dispatcher (made on first use), kept on the app's state."""
    dispatcher: Dispatcher | None = getattr(app_state, "delivery_dispatcher", None)
    if dispatcher is None:
        dispatcher = Dispatcher(app_state.delivery_env)
        app_state.delivery_dispatcher = dispatcher
    return dispatcher


def serve(app_state: Any) -> None:
    """A server's one way to start claims: the scheduler's poll, and the wake-ups of whatever queued messages
    (the monitor loop, routing, an evaluation asked for). Runs the dispatcher in the background and claims
    what is due now; a wake-up during a claim asks for one more."""
    dispatcher = dispatcher_of(app_state)
    dispatcher.serving = True
    dispatcher.wake()


async def deliver_due(app_state: Any, *, limit: int = 200) -> int:
    """Send what is due. In a server (the dispatcher runs in the background) this only wakes it and returns 0;
    otherwise it sends at most `limit` and waits for them: returns the number of attempts made."""
    dispatcher = dispatcher_of(app_state)
    if dispatcher.serving:
        dispatcher.wake()
        return 0
    return await dispatcher.run_due(limit)


async def stop_dispatcher(app_state: Any, grace: float) -> None:
    dispatcher: Dispatcher | None = getattr(app_state, "delivery_dispatcher", None)
    if dispatcher is not None:
        await dispatcher.stop(grace)


class _State:
    delivery_env: DeliveryEnv


ANYTHING_DUE = f"""
SELECT 1 FROM deliveries d WHERE d.status IN {_DUE} AND d.next_attempt_at <= now() AND {streams.IS_HEAD} LIMIT 1"""


async def _anything_due(env: DeliveryEnv) -> bool:
    """Whether any process still has work due now (a stream head in flight elsewhere holds its successors)."""
    async with env.sessionmaker() as session:
        return await (await driver_connection(session)).fetchval(ANYTHING_DUE) is not None


async def run_until_idle(settings: Settings, *, max_ticks: int = 100_000) -> int:
    """Send until nothing is due anywhere (for tools and tests that drive the worker outside a server)."""
    engine = make_engine(settings.database_url or "", pool_size=min(settings.delivery_concurrency, 20))
    notifier_env = build_notifier_env(settings)
    http = HttpSender(notifier_env.guard, timeout=settings.http_timeout_seconds)
    state = _State()
    state.delivery_env = DeliveryEnv(settings, notifier_env, http, make_sessionmaker(engine))
    total = 0
    try:
        for _ in range(max_ticks):
            made = await deliver_due(state, limit=1_000_000)
            total += made
            if made == 0:
                if not await _anything_due(state.delivery_env):
                    break
                await asyncio.sleep(0.02)  # another process holds what is due; look again
    finally:
        await http.aclose()
        await engine.dispose()
    return total

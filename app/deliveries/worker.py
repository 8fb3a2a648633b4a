"""The delivery worker: in every server process, a dispatcher claims due deliveries and sends them concurrently.

No transaction is open during a send. A claim leases due stream heads (`claimed_until`, `claim_token`) in one
statement (`FOR UPDATE SKIP LOCKED`) and prepares them (notifier, mute, pacing: the rare cases through
`sending.prepare`); the send follows outside any transaction, and its outcome is recorded as soon as it ends, in
batches, each only if its lease is still ours (app/deliveries/recording.py). While the process holds a row, it
keeps its lease (app/deliveries/leases.py), and a send starts only while the row's lease outlasts the longest a
send may take (`sending.send_limit`) with room to record it; so a row is never sent twice while its sender lives.
When the database drops a connection, the outcome is recorded on a new one, again until it is taken, and the lease
is kept meanwhile. A process killed mid-send leaves its rows leased until the lease runs out, then they are
claimed again: what it had in flight may be sent twice (never lost). In flight: the sends under way (at most
`delivery_per_destination` per notifier, `delivery_concurrency` in all) and the sends that ended but whose outcome
is not written yet; no send starts while as many outcomes of its notifier (or of the process) wait to be written,
so at most twice those numbers.

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
import logging
import secrets
import time
from collections import Counter, deque
from datetime import datetime

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.http import HttpSender
from app.db.delivery import Delivery
from app.db.engine import driver_connection, make_engine, make_sessionmaker
from app.db.notifier import Notifier
from app.db.unavailable import database_unavailable
from app.deliveries import streams
from app.deliveries.leases import CLAIM_DUE, CLAIM_UNMUTED, Claimed, Lease, LeaseKeeper, release, release_claim
from app.deliveries.recording import Recorder, Sent
from app.deliveries.sending import TEST_KIND, DeliveryEnv, Destination, prepare, reusable, send_limit, send_once
from app.deliveries.timers import WakeTimer
from app.notifiers.service import build_notifier_env
from app.settings import Settings
from app.timefmt import utcnow

log = logging.getLogger("beacon.deliveries")
CLAIM_BATCH = 64
# A timer further out than this is not set: the scheduler's poll finds the row anyway.
MAX_TIMER_SECONDS = 3600.0
# After a claim failed (the database dropped the connection), claim again this soon rather than at the next poll,
# twice as late after each further failure.
CLAIM_RETRY_SECONDS, CLAIM_RETRY_MAX_SECONDS = 0.25, 5.0
NOTIFIERS = """
SELECT id, name, type, target, config_sealed, disabled_until, disabled_reason, created_at, updated_at
FROM notifiers WHERE id = ANY($1::text[])"""


class Dispatcher:
    """One per process (a server's is a member of its Services; a tool makes its own): the sends in flight, the
    claimed rows waiting for a slot, the outcomes to record."""

    def __init__(self, env: DeliveryEnv) -> None:
        self.env = env
        settings = env.settings
        self.capacity = max(1, settings.delivery_concurrency)
        self.per_destination = max(1, settings.delivery_per_destination)
        # A destination's queue is refilled when it holds less than two rounds of its sends: the claim's round
        # trip (slower under load) must end before the queue runs dry.
        self.refill_below = 2 * self.per_destination
        self.lease_seconds = settings.delivery_lease_seconds
        self.send_limit = send_limit(settings)
        # A send starts only while its row's lease lasts this much longer: the send, then time to record it.
        self.start_margin = self.send_limit + self.lease_seconds / 8
        self.engine = env.sessionmaker.kw["bind"]
        self.leases = LeaseKeeper(self.engine, self.lease_seconds)
        self.recorder = Recorder(env, self._disabled)
        self.sending: Counter[str] = Counter()  # notifier id -> sends in flight
        self.unrecorded: Counter[str] = Counter()  # notifier id -> sends ended, their outcome not written yet
        self.queued: dict[str, deque[Claimed]] = {}  # notifier id -> claimed, waiting for a slot
        self.tasks: set[asyncio.Task[None]] = set()
        self._a_task_ended = asyncio.Event()
        self.attempted = 0
        self.serving = False
        self._pumping = False
        self._again = False
        self._pump_task: asyncio.Task[None] | None = None
        self.timer = WakeTimer(self.wake)  # when rows fall due here (retries, pacing, mutes)
        self._claim_wanted = False
        self._claim_failures = 0  # in a row

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
        """Lease up to `limit` stream heads that are due (and, `with_deferred`, whose mute has ended) and prepare
        them. Returns the sends to make and whether another claim may find more.

        The lease is one statement that commits by itself; preparing (rarely) writes in a transaction after it. When
        either fails, what the claim leased is given back (when the lease's answer itself was lost, by its token)."""
        busy = [n for n in {*self.sending, *self.queued} if self._waiting(n) >= self.refill_below]
        token = secrets.token_hex(8)
        leased: list[Lease] = []
        claimed_at = time.monotonic()  # the leases last at least `lease_seconds` from now (app/deliveries/leases.py)
        try:
            async with self.env.sessionmaker() as session:
                conn = await session.connection()
                driver = await driver_connection(conn)
                try:
                    # Per notifier: a round in flight, a queue as deep as the slots.
                    per_notifier, lease = self.per_destination + self.capacity, self.lease_seconds
                    found = await driver.fetch(CLAIM_DUE, busy, limit, lease, token, per_notifier)
                    leased = [Lease(*r.values()) for r in found]
                    if with_deferred and len(leased) < limit:
                        found = await driver.fetch(CLAIM_UNMUTED, busy, limit - len(leased), lease, token)
                        leased += [Lease(*r.values()) for r in found]
                    if not leased:
                        return [], False
                    claimed, settled = await self._prepare(session, driver, leased, token, claimed_at)
                    await session.commit()
                except BaseException:
                    if driver.is_closed():
                        await conn.invalidate()  # not back into the pool
                    raise
        except Exception as exc:
            if leased:
                await release(self.engine, [(row.id, token) for row in leased])
            elif database_unavailable(exc):
                await release_claim(self.engine, token)
            raise
        self.leases.hold(claimed)
        # More may be due: a full batch, or a stream whose head was settled (its next message is now the head).
        return claimed, len(leased) == limit or settled > 0

    async def _prepare(
        self, session: AsyncSession, driver: asyncpg.Connection, leased: list[Lease], token: str, claimed_at: float
    ) -> tuple[list[Claimed], int]:
        """The sends to make of the leased rows, and how many rows were settled instead (deferred, paced, closed).

        The common case (a notifier that exists, is not muted, not paced) needs only the claim's notifiers, read in
        one statement; the others go through `sending.prepare` in a transaction (the rows it settles are written)."""
        env, now = self.env, utcnow()
        claimed: list[Claimed] = []
        settled = 0
        deadline = claimed_at + self.lease_seconds
        # Per notifier, the destination its first row made: the claim's other rows for it send through it, so each
        # claim reads and unseals a notifier once. A deferred row always settles its stream in `prepare`.
        destinations: dict[str, Destination] = {}
        wanted = sorted({row.notifier_id for row in leased if not row.deferred and row.kind != TEST_KIND})
        for found in await driver.fetch(NOTIFIERS, wanted) if wanted else ():
            ready = self._destination(Notifier(**dict(found)), now)
            if ready is not None:
                destinations[found["id"]] = ready
        for row in leased:
            destination = None if row.deferred or row.kind == TEST_KIND else destinations.get(row.notifier_id)
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
                Claimed(row.id, row.notifier_id, token, row.attempts, row.max_attempts, plan, claimed_at, deadline)
            )
        return claimed, settled

    def _destination(self, notifier: Notifier, now: datetime) -> Destination | None:
        """The notifier's destination when its rows need nothing of `prepare`: not muted, its type installed, not
        paced (each paced row takes a slot of its own)."""
        if notifier.disabled_until is not None and notifier.disabled_until > now:
            return None
        adapter_cls = self.env.notifiers.registry.get(notifier.type)
        if adapter_cls is None:
            return None
        destination = Destination.of(self.env, notifier, adapter_cls, now)
        return destination if destination.pacing_key is None else None

    # -- sending --------------------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Start the claimed sends that have a slot: free in the process and in their destination's share, and not
        held by outcomes still to be written."""
        in_flight = sum(self.sending.values())
        unrecorded = sum(self.unrecorded.values())
        now = time.monotonic()
        stale: list[Claimed] = []
        for notifier_id in list(self.queued):
            waiting = self.queued[notifier_id]
            while (
                waiting
                and in_flight < self.capacity
                and in_flight + unrecorded < 2 * self.capacity
                and self.sending[notifier_id] < self.per_destination
                and self.sending[notifier_id] + self.unrecorded[notifier_id] < 2 * self.per_destination
            ):
                claimed = waiting.popleft()
                if claimed.lost:
                    continue  # another process may hold it now
                if now - claimed.claimed_at > self.lease_seconds / 2 or claimed.deadline - now < self.start_margin:
                    # Waited half its lease for a slot (its destination is slow: let other processes have it), or
                    # its lease could not be extended (the database is out of reach): given back, not sent.
                    log.warning("delivery %s: waited too long to send now; it is claimed again", claimed.delivery_id)
                    stale.append(claimed)
                    continue
                self.sending[notifier_id] += 1
                in_flight += 1
                self._track(asyncio.create_task(self._send(claimed)))
            if not waiting:
                del self.queued[notifier_id]
        if stale:
            self._give_back(stale)

    def _give_back(self, rows: list[Claimed]) -> None:
        for c in rows:
            self.leases.drop(c)
        self._track(asyncio.create_task(release(self.engine, [(c.delivery_id, c.token) for c in rows])))

    def _track(self, task: asyncio.Task[None]) -> None:
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self._a_task_ended.set()
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("a delivery task failed", exc_info=exc)

    async def _send(self, claimed: Claimed) -> None:
        notifier_id = claimed.notifier_id
        try:
            started, clock = utcnow(), time.monotonic()
            result = await send_once(claimed.plan.adapter, claimed.plan.event, limit=self.send_limit)
            duration_ms = int((time.monotonic() - clock) * 1000)
        finally:
            claimed.sent = True
            _decrement(self.sending, notifier_id)
        self.unrecorded[notifier_id] += 1
        recorded = asyncio.get_running_loop().create_future()
        self.recorder.add(Sent(claimed, result, started, duration_ms, recorded))
        self._dispatch()  # the destination's next claimed message goes now
        if self._waiting(notifier_id) < self.refill_below:
            self._want_claim()  # refill the destination's queue while its sends go on
        try:
            done = await recorded
        finally:
            _decrement(self.unrecorded, notifier_id)
            self.leases.drop(claimed)
        self.attempted += 1
        self._dispatch()  # a send held back by unwritten outcomes may go now
        if done.next_at is not None:
            self._wake_at(done.next_at)
        if done.has_next:
            self._want_claim()  # the stream's next message is its head now

    def _disabled(self, notifier_ids: set[str]) -> None:
        """Notifiers just disabled (their endpoint is gone): their queued rows are given back, to be claimed again
        and deferred with the reason."""
        back = [c for n in notifier_ids for c in self.queued.pop(n, ())]
        if back:
            self._give_back(back)
        self._want_claim()

    def _want_claim(self) -> None:
        """Claim again soon (not after every send: a claim that finds nothing still costs a round trip)."""
        self._claim_wanted = True
        self.wake()

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
                    self._claim_failures = 0
                except Exception as exc:
                    # Again soon, then less often while it keeps failing (the database is down: one line a few s).
                    delay = min(CLAIM_RETRY_SECONDS * 2**self._claim_failures, CLAIM_RETRY_MAX_SECONDS)
                    self._claim_failures += 1
                    if database_unavailable(exc):
                        log.warning("delivery claim failed (%s); claiming again in %g s", exc, delay)
                    else:
                        log.exception("delivery claim failed; claiming again in %g s", delay)
                    self._wake_after(delay)
                if not self._again or not self.serving:
                    return
        finally:
            self._pumping = False

    def _wake_at(self, when: datetime) -> None:
        """Claim again at `when` (a retry, a paced message, a mute's end)."""
        self._wake_after((when - utcnow()).total_seconds())

    def _wake_after(self, delay: float) -> None:
        """Claim again in `delay` seconds (server mode only)."""
        if self.serving and delay <= MAX_TIMER_SECONDS:
            self.timer.after(delay)

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
        self.timer.stop()
        waiting = [c for q in self.queued.values() for c in q]
        self.queued.clear()
        await release(self.engine, [(c.delivery_id, c.token) for c in waiting])
        pending = {t for t in (*self.tasks, self._pump_task, self.recorder.task) if t is not None and not t.done()}
        if pending:
            _, late = await asyncio.wait(pending, timeout=grace)
            for task in late:
                task.cancel()  # its lease runs out and another process sends it
        await self.leases.stop()


def _decrement(counter: Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


def serve(dispatcher: Dispatcher) -> None:
    """A server's one way to start claims: the scheduler's poll, and the wake-ups of whatever queued messages
    (the monitor loop, routing, an evaluation asked for). Runs the dispatcher in the background and claims
    what is due now; a wake-up during a claim asks for one more."""
    dispatcher.serving = True
    dispatcher.wake()


async def deliver_due(dispatcher: Dispatcher, *, limit: int = 200) -> int:
    """Send what is due. In a server (the dispatcher runs in the background) this only wakes it and returns 0;
    otherwise it sends at most `limit` and waits for them: returns the number of attempts made."""
    if dispatcher.serving:
        dispatcher.wake()
        return 0
    return await dispatcher.run_due(limit)


ANYTHING_DUE = f"""
SELECT 1 FROM deliveries d
WHERE d.status IN {streams.sql_list(streams.DUE)} AND d.next_attempt_at <= now() AND {streams.IS_HEAD} LIMIT 1"""


async def _anything_due(env: DeliveryEnv) -> bool:
    """Whether any process still has work due now (a stream head in flight elsewhere holds its successors)."""
    async with env.sessionmaker() as session:
        return await (await driver_connection(session)).fetchval(ANYTHING_DUE) is not None


async def run_until_idle(settings: Settings, *, max_ticks: int = 100_000) -> int:
    """Send until nothing is due anywhere (for tools and tests that drive the worker outside a server)."""
    engine = make_engine(settings.database_url or "", pool_size=min(settings.delivery_concurrency, 20))
    notifier_env = build_notifier_env(settings)
    http = HttpSender(notifier_env.guard, timeout=settings.http_timeout_seconds)
    dispatcher = Dispatcher(DeliveryEnv(settings, notifier_env, http, make_sessionmaker(engine)))
    total = 0
    try:
        for _ in range(max_ticks):
            made = await deliver_due(dispatcher, limit=1_000_000)
            total += made
            if made == 0:
                if not await _anything_due(dispatcher.env):
                    break
                await asyncio.sleep(0.02)  # another process holds what is due; look again
    finally:
        await http.aclose()
        await engine.dispose()
    return total

"""The delivery worker: in every server process, a dispatcher claims due deliveries and sends them concurrently.

No transaction is open during a send. A claim is a short transaction: due rows are locked with `FOR UPDATE
SKIP LOCKED`, prepared (notifier, mute, pacing) and leased (`claimed_until`, `claim_token`); the send follows
outside any transaction, and the outcome is recorded in another short one, only if the lease is still ours.
Any number of processes share the queue without sending a row twice as long as a send ends within the lease
(`delivery_lease_seconds`, well above the HTTP timeout); a process killed mid-send leaves its rows leased
until the lease expires, then they are claimed again (at least once, never lost).

Only the head of each stream is claimable (app/deliveries/streams.py), so a stream's messages go one at a
time, in order. A process has `delivery_concurrency` sends in flight at most, and `delivery_per_destination`
per notifier, so a hanging destination holds a few slots and the others keep flowing.

In a server, `serve` runs the dispatcher in the background: the scheduler job and the monitors' and
routing's wake-ups only start sends; each finished send wakes it again (the stream's next message is due),
and a retry or a paced message sets a timer for its time. Without a server (tests, tools), `deliver_due`
sends what is due and waits for it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import exists, func, select

from adapters.base import DeliveryResult
from adapters.http import HttpSender
from app.db.delivery import Delivery
from app.db.engine import make_engine, make_sessionmaker
from app.db.notifier import Notifier
from app.deliveries import streams
from app.deliveries.sending import DeliveryEnv, Plan, prepare, record, send_once
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
    plan: Plan


class Dispatcher:
    """One per process: the sends in flight and what bounds them."""

    def __init__(self, env: DeliveryEnv) -> None:
        self.env = env
        self.capacity = max(1, env.settings.delivery_concurrency)
        self.per_destination = max(1, env.settings.delivery_per_destination)
        self.in_flight: Counter[str] = Counter()  # notifier id -> sends in flight
        self.tasks: set[asyncio.Task[None]] = set()
        self.attempted = 0
        self.serving = False
        self._pumping = False
        self._again = False
        self._pump_task: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()

    # -- claiming -------------------------------------------------------------------------------------------

    async def pump(self, room: int | None = None) -> int:
        """Claim due deliveries while slots are free and start sending them; returns how many were started."""
        started = 0
        while True:
            free = self.capacity - len(self.tasks)
            if room is not None:
                free = min(free, room - started)
            if free <= 0:
                return started
            sends, more = await self._claim(min(free, CLAIM_BATCH))
            for claimed in sends:
                self._start(claimed)
            started += len(sends)
            if not more:
                return started

    async def _claim(self, limit: int) -> tuple[list[Claimed], bool]:
        """One short transaction: lock up to `limit` stream heads that are due, prepare and lease them. Returns
        the sends to make and whether another claim may find more."""
        env, now = self.env, utcnow()
        busy = [n for n, count in self.in_flight.items() if count >= self.per_destination]
        free_of_lease = (Delivery.claimed_until.is_(None)) | (Delivery.claimed_until < func.now())
        common = (free_of_lease, Delivery.notifier_id.not_in(busy), streams.is_head())
        async with env.sessionmaker() as session:
            due = select(Delivery).where(
                Delivery.status.in_(("pending", "retrying")), Delivery.next_attempt_at <= func.now(), *common
            )
            rows = list(
                (
                    await session.execute(
                        due.order_by(Delivery.next_attempt_at)
                        .limit(limit)
                        .with_for_update(skip_locked=True, of=Delivery)
                    )
                ).scalars()
            )
            if len(rows) < limit:
                # Deferred by a mute that has ended (or was lifted early).
                muted = exists().where(Notifier.id == Delivery.notifier_id, Notifier.disabled_until > func.now())
                unmuted = select(Delivery).where(Delivery.status == "deferred", ~muted, *common)
                rows += (
                    await session.execute(
                        unmuted.order_by(Delivery.seq)
                        .limit(limit - len(rows))
                        .with_for_update(skip_locked=True, of=Delivery)
                    )
                ).scalars()
            if not rows:
                return [], False
            ids = {d.notifier_id for d in rows}
            found = {n.id: n for n in (await session.execute(select(Notifier).where(Notifier.id.in_(ids)))).scalars()}
            counts = Counter(self.in_flight)
            sends: list[Claimed] = []
            settled = left = 0
            lease_until = now + timedelta(seconds=env.settings.delivery_lease_seconds)
            for delivery in rows:
                if counts[delivery.notifier_id] >= self.per_destination:
                    left += 1  # stays unclaimed: the destination has its share of this process's slots
                    continue
                plan = await prepare(session, env, delivery, found.get(delivery.notifier_id))
                if isinstance(plan, str):
                    settled += 1
                    if delivery.next_attempt_at is not None and delivery.status != "superseded":
                        self._wake_at(delivery.next_attempt_at)
                    continue
                delivery.claimed_until = lease_until
                delivery.claim_token = secrets.token_hex(8)
                counts[delivery.notifier_id] += 1
                sends.append(Claimed(delivery.id, delivery.notifier_id, delivery.claim_token, plan))
            await session.commit()
        # More may be due: a full batch, a stream whose head was settled (its next message is now the head), or
        # rows left for a busy destination (the next claim skips it).
        return sends, len(rows) == limit or settled > 0 or left > 0

    # -- sending --------------------------------------------------------------------------------------------

    def _start(self, claimed: Claimed) -> None:
        self.in_flight[claimed.notifier_id] += 1
        task = asyncio.create_task(self._send(claimed))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, claimed: Claimed) -> None:
        try:
            started, clock = utcnow(), time.monotonic()
            result = await send_once(claimed.plan.adapter, claimed.plan.event)
            duration_ms = int((time.monotonic() - clock) * 1000)
            try:
                next_at = await self._record(claimed, result, started, duration_ms)
            except Exception:
                # The lease runs out and the row is claimed again: sent twice rather than never.
                log.exception("recording delivery %s failed", claimed.delivery_id)
                next_at = None
        finally:
            self.in_flight[claimed.notifier_id] -= 1
            if self.in_flight[claimed.notifier_id] <= 0:
                del self.in_flight[claimed.notifier_id]
            self.attempted += 1
        if next_at is not None:
            self._wake_at(next_at)
        self.wake()  # a slot is free, and the stream's next message may be due

    async def _record(
        self, claimed: Claimed, result: DeliveryResult, started: datetime, duration_ms: int
    ) -> datetime | None:
        """The outcome, in a short transaction, if the lease is still ours; returns when it is due again."""
        async with self.env.sessionmaker() as session:
            delivery = (
                await session.execute(select(Delivery).where(Delivery.id == claimed.delivery_id).with_for_update())
            ).scalar_one_or_none()
            if delivery is None or delivery.claim_token != claimed.token:
                log.warning("delivery %s: its lease ran out during the send; outcome not recorded", claimed.delivery_id)
                return None
            record(session, self.env, delivery, result, started, duration_ms)
            await session.commit()
            return delivery.next_attempt_at

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
        if not self.serving:
            return
        delay = (when - utcnow()).total_seconds()
        if delay > MAX_TIMER_SECONDS:
            return
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def fire() -> None:
            self._timers.discard(handle)
            self.wake()

        handle = loop.call_later(max(delay, 0.0) + 0.005, fire)
        self._timers.add(handle)

    async def run_due(self, limit: int) -> int:
        """Send what is due now and wait for it (no server): returns the number of attempts made."""
        before = self.attempted
        while True:
            made = self.attempted - before
            await self.pump(room=limit - made - len(self.tasks))
            if not self.tasks:
                return self.attempted - before
            await asyncio.wait(set(self.tasks), return_when=asyncio.FIRST_COMPLETED)

    async def stop(self, grace: float) -> None:
        """Shutdown: claim nothing more and let the sends in flight finish (then record them)."""
        self.serving = False
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        pending = {t for t in (*self.tasks, self._pump_task) if t is not None and not t.done()}
        if pending:
            _, late = await asyncio.wait(pending, timeout=grace)
            for task in late:
                task.cancel()  # its lease runs out and another process sends it


def dispatcher_of(app_state: Any) -> Dispatcher:
    """The process's dispatcher (made on first use), kept on the app's state."""
    dispatcher: Dispatcher | None = getattr(app_state, "delivery_dispatcher", None)
    if dispatcher is None:
        dispatcher = Dispatcher(app_state.delivery_env)
        app_state.delivery_dispatcher = dispatcher
    return dispatcher


def serve(app_state: Any) -> None:
    """The scheduler job: run the dispatcher in the background and claim what is due now."""
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


async def _anything_due(env: DeliveryEnv) -> bool:
    """Whether any process still has work due now (a stream head in flight elsewhere holds its successors)."""
    async with env.sessionmaker() as session:
        stmt = (
            select(Delivery.id)
            .where(
                Delivery.status.in_(("pending", "retrying")), Delivery.next_attempt_at <= func.now(), streams.is_head()
            )
            .limit(1)
        )
        return (await session.execute(stmt)).scalar() is not None


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

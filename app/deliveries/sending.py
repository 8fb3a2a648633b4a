"""One delivery attempt in three steps: prepare (notifier, mute, pacing, adapter), send, record. Shared by the
worker (app/deliveries/worker.py: prepare and record in two short transactions around a send made under a
lease) and by `test` and `retry` (one transaction around all three: the row is theirs alone meanwhile).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.base import Adapter
from adapters.contract import AdapterContext, AdapterSettings, DeliveryResult, Event, TemplateFailure
from adapters.http import DETAIL_LIMIT, MAX_RETRY_AFTER_SECONDS, HttpSender, redact
from app.db.delivery import Delivery, DeliveryAttempt
from app.db.notifier import Notifier
from app.deliveries import streams
from app.metrics import Metrics
from app.notifiers import service as notifiers
from app.notifiers.service import NotifierEnv
from app.settings import Settings
from app.timefmt import iso_ms, utcnow

log = logging.getLogger("beacon.deliveries")
ERROR_LIMIT = 1000
TEST_KIND = "notifier.test"  # a test message: sent even to a muted notifier


@dataclass(frozen=True)
class DeliveryEnv:
    """What sending needs from the running app (built in the lifespan: it owns the HTTP client)."""

    settings: Settings
    notifiers: NotifierEnv
    http: HttpSender
    sessionmaker: async_sessionmaker[AsyncSession]
    metrics: Metrics = field(default_factory=Metrics)

    @functools.cached_property
    def adapter_settings(self) -> AdapterSettings:
        """The part of the settings adapters see (made once: every send's context holds it)."""
        return self.settings.for_adapters()


def retry_delay(
    attempt: int,
    retry_after: float | None,
    *,
    base: float,
    cap: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds until the next try: the destination's Retry-After when it gave one, otherwise exponential
    backoff (base · 2^(attempt-1), capped) with jitter over its upper half, so retries do not arrive in step."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), MAX_RETRY_AFTER_SECONDS)
    ceiling = min(cap, base * 2 ** (attempt - 1))
    return ceiling / 2 + rand() * ceiling / 2


async def take_pacing_slot(session: AsyncSession, key: str, interval: float) -> datetime | None:
    """None when the destination may get a message now (the slot is taken); else when it may next."""
    taken = await session.execute(
        text(
            """
            INSERT INTO delivery_pacing (key, next_at) VALUES (:key, clock_timestamp() + make_interval(secs => :s))
            ON CONFLICT (key) DO UPDATE SET next_at = EXCLUDED.next_at
            WHERE delivery_pacing.next_at <= clock_timestamp()
            RETURNING next_at
            """
        ),
        {"key": key, "s": interval},
    )
    if taken.first() is not None:
        return None
    return (
        await session.execute(text("SELECT next_at FROM delivery_pacing WHERE key = :key"), {"key": key})
    ).scalar_one()


def _finish(delivery: Delivery, status: str, error: str | None, now: datetime) -> None:
    delivery.status = status
    delivery.error = error[:ERROR_LIMIT] if error else None
    delivery.next_attempt_at = None
    delivery.updated_at = now


def event_of(stored: Any) -> Event:
    """A delivery's stored event (jsonb: decoded by the ORM, or its text as asyncpg returns it without a codec)."""
    if isinstance(stored, str | bytes):
        return msgspec.json.decode(stored, type=Event)
    return msgspec.convert(stored, Event)


@dataclass(frozen=True)
class Destination:
    """A notifier ready to send through: what every delivery to it shares (its adapter class, the unsealed
    config, the secrets that sign now, its name)."""

    adapter_cls: type[Adapter[Any]]
    config: Any
    signing_secrets: tuple[str, ...]
    notifier_name: str

    @classmethod
    def of(cls, env: DeliveryEnv, notifier: Notifier, adapter_cls: type[Adapter[Any]], now: datetime) -> Destination:
        config = notifiers.config_of(env.notifiers, notifier)
        secrets = tuple(notifiers.signing_secrets(env.notifiers, notifier, now))
        return cls(adapter_cls, config, secrets, notifier.name)

    @property
    def pacing_key(self) -> str | None:
        """Set when its messages are paced (`min_interval`): each one then needs its own slot."""
        return self.adapter_cls.pacing_key(self.config) if self.adapter_cls.min_interval > 0 else None

    def adapter(self, env: DeliveryEnv, message_id: str) -> Adapter[Any]:
        context = AdapterContext(
            settings=env.adapter_settings,
            http=env.http,
            message_id=message_id,
            signing_secrets=self.signing_secrets,
            notifier_name=self.notifier_name,
        )
        return self.adapter_cls(self.config, context)

    def plan(self, env: DeliveryEnv, delivery_id: str, stored_event: Any) -> Plan:
        return Plan(self.adapter(env, delivery_id), event_of(stored_event), self)


@dataclass(frozen=True)
class Plan:
    """A delivery ready to send: its adapter (config, secrets) and the event it renders."""

    adapter: Adapter[Any]
    event: Event
    destination: Destination


async def prepare(session: AsyncSession, env: DeliveryEnv, delivery: Delivery, notifier: Notifier | None) -> Plan | str:
    """Everything before the send, in the caller's transaction: a Plan, or why nothing is sent now
    ("closed": settled for good; "paced", "deferred": due again at `next_attempt_at`; "superseded")."""
    now = utcnow()
    if notifier is None:
        _finish(delivery, "failed", "the notifier was deleted", now)
        return "closed"
    if delivery.kind != TEST_KIND and notifier.disabled_until is not None and notifier.disabled_until > now:
        # A mute defers (app/deliveries/streams.py): the row waits, and so do the later ones of its stream.
        delivery.status = "deferred"
        delivery.error = (
            f"the notifier is disabled: {notifier.disabled_reason}"
            if notifier.disabled_reason
            else f"the notifier is disabled until {iso_ms(notifier.disabled_until)}"
        )[:ERROR_LIMIT]
        delivery.next_attempt_at = notifier.disabled_until
        delivery.updated_at = now
        return "deferred"
    if delivery.status == "deferred":
        if await streams.settle_after_mute(session, delivery, now):
            return "superseded"
        delivery.status, delivery.error = "pending", None
    adapter_cls = env.notifiers.registry.get(notifier.type)
    if adapter_cls is None:
        _finish(delivery, "failed", f"notifier type {notifier.type!r} is not installed", now)
        return "closed"
    destination = Destination.of(env, notifier, adapter_cls, now)
    pacing_key = destination.pacing_key
    if pacing_key:
        next_at = await take_pacing_slot(session, pacing_key, adapter_cls.min_interval)
        if next_at is not None:
            delivery.next_attempt_at = next_at
            delivery.updated_at = now
            return "paced"
    return destination.plan(env, delivery.id, delivery.event)


def reusable(plan: Plan, kind: str) -> bool:
    """Whether the other due deliveries to the same notifier, prepared in the same transaction, may send
    through `plan.destination` without a `prepare` of their own: not when each needs its own pacing slot, nor
    after a test message (it ignores a mute, so the notifier's mute was not looked at)."""
    return kind != TEST_KIND and plan.destination.pacing_key is None


async def attempt(session: AsyncSession, env: DeliveryEnv, delivery: Delivery) -> str:
    """Make one attempt at a delivery inside the caller's transaction (`test` and `retry`, which answer with
    the outcome; the worker sends outside any transaction). Returns "attempted" or why it was not sent."""
    notifier = await session.get(Notifier, delivery.notifier_id)
    plan = await prepare(session, env, delivery, notifier)
    if isinstance(plan, str):
        return plan
    started, clock = utcnow(), time.monotonic()
    result = await send_once(plan.adapter, plan.event, limit=send_limit(env.settings))
    seconds = time.monotonic() - clock
    done = record(session, env, delivery, result, started, int(seconds * 1000))
    if result.gone and notifier is not None:
        notifier.disabled_until = notifiers.DISABLED_FOR_GOOD
        notifier.disabled_reason = notifiers.gone_reason(delivery.id, utcnow())
        notifier.updated_at = utcnow()
    observe(env, delivery.id, delivery.notifier_id, plan.adapter.type, done, seconds)
    return "attempted"


def send_limit(settings: Settings) -> float:
    """The longest a send may take in all, in seconds: each step of it (connecting, writing, waiting for the answer)
    is bounded by the HTTP timeout, but a destination that trickles its answer could stretch them without end. And
    at most half the lease, so that a send always ends well inside the lease of the row it sends
    (app/deliveries/worker.py)."""
    return min(2 * settings.http_timeout_seconds + 5, settings.delivery_lease_seconds / 2)


async def send_once(adapter: Adapter[Any], event: Event, *, limit: float) -> DeliveryResult:
    """Render, then send, taking at most `limit` seconds (`send_limit`); a template failure sends nothing and is
    not retried."""
    try:
        message = adapter.render(event)
    except TemplateFailure as exc:
        return DeliveryResult(ok=False, retryable=False, detail=str(exc))
    try:
        async with asyncio.timeout(limit):
            return await adapter.send(message)
    except TimeoutError:
        return DeliveryResult(ok=False, retryable=True, detail=f"timeout: no answer within {limit:g} s in all")
    except Exception as exc:
        # An adapter bug: keep the delivery (retry later) and say what happened, secrets masked.
        detail = redact(f"{type(exc).__name__}: {exc}", adapter.secret_values())
        log.error("adapter %s failed unexpectedly: %s", adapter.type, detail)
        return DeliveryResult(ok=False, retryable=True, detail=f"internal error: {detail}")


@dataclass(frozen=True)
class Outcome:
    """What an attempt makes of a delivery: its new status, error and next try (None: it is over)."""

    status: str
    error: str | None
    next_attempt_at: datetime | None


def outcome_of(
    env: DeliveryEnv, attempts: int, max_attempts: int, result: DeliveryResult, started: datetime, duration_ms: int
) -> Outcome:
    """`attempts` counts this attempt. The backoff counts from the attempt's end (`started` + `duration_ms`), not
    from when its outcome is written: a slow write (a busy database, a batch behind others) must not lengthen it."""
    if result.ok:
        return Outcome("succeeded", None, None)
    detail = result.detail or "failed"
    if result.gone:
        detail = f"{detail[:DETAIL_LIMIT]} — the endpoint is gone (410): the notifier is disabled until re-enabled"
    if result.retryable and attempts < max_attempts:
        settings = env.settings
        delay = retry_delay(
            attempts,
            result.retry_after,
            base=settings.delivery_backoff_seconds,
            cap=settings.delivery_backoff_max_seconds,
        )
        ended = started + timedelta(milliseconds=duration_ms)
        return Outcome("retrying", detail[:ERROR_LIMIT], ended + timedelta(seconds=delay))
    if result.retryable:
        detail = f"gave up after {attempts} attempts: {detail}"
    return Outcome("failed", detail[:ERROR_LIMIT], None)


def observe(env: DeliveryEnv, delivery_id: str, notifier_id: str, type_: str, done: Outcome, seconds: float) -> None:
    """An attempt's outcome in the metrics, and in the log when it failed (a retry to come, or given up)."""
    env.metrics.deliveries.labels(type_, done.status).inc()
    env.metrics.delivery_duration.labels(type_).observe(seconds)
    ids = {"delivery_id": delivery_id, "notifier_id": notifier_id, "notifier_type": type_}
    if done.status == "retrying":
        assert done.next_attempt_at is not None
        log.warning(
            "delivery %s to notifier %s failed; next attempt at %s: %s",
            delivery_id,
            notifier_id,
            iso_ms(done.next_attempt_at),
            done.error,
            extra=ids,
        )
    elif done.status == "failed":
        log.warning("delivery %s to notifier %s failed for good: %s", delivery_id, notifier_id, done.error, extra=ids)


def record(
    session: AsyncSession,
    env: DeliveryEnv,
    delivery: Delivery,
    result: DeliveryResult,
    started: datetime,
    duration_ms: int,
) -> Outcome:
    now = utcnow()
    delivery.claimed_until = delivery.claim_token = None
    delivery.attempts += 1
    delivery.last_attempt_at = started
    delivery.response_status = result.status
    session.add(
        DeliveryAttempt(
            delivery_id=delivery.id,
            attempt=delivery.attempts,
            started_at=started,
            duration_ms=duration_ms,
            ok=result.ok,
            retryable=result.retryable,
            response_status=result.status,
            error=None if result.ok else (result.detail or "failed")[:ERROR_LIMIT],
        )
    )
    done = outcome_of(env, delivery.attempts, delivery.max_attempts, result, started, duration_ms)
    delivery.status, delivery.error, delivery.next_attempt_at = done.status, done.error, done.next_attempt_at
    delivery.updated_at = now
    return done

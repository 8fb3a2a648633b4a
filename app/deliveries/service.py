"""Deliveries through the API: enqueue (for monitors), test, preview, list, get, retry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import msgspec
from sqlalchemy import func, or_, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from adapters.contract import Event, TemplateFailure
from adapters.http import redact_value
from app.access import delivery_filter
from app.auth import Principal
from app.db.delivery import Delivery, DeliveryAttempt
from app.deliveries.schemas import STATUSES, AttemptOut, DeliveryOut, PreviewOut
from app.deliveries.sending import DeliveryEnv, Destination, attempt
from app.deliveries.streams import OPEN, stream_of
from app.errors import BeaconError, check_choice, not_found
from app.notifiers import service as notifiers
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.request_ids import new_id
from app.timefmt import iso_ms, iso_ms_or_none, utcnow


def to_out(d: Delivery, attempts: list[DeliveryAttempt] | None = None) -> DeliveryOut:
    out = DeliveryOut(
        id=d.id,
        notifier_id=d.notifier_id,
        monitor_id=d.monitor_id,
        monitor_event_id=d.monitor_event_id,
        kind=d.kind,
        status=d.status,
        attempts=d.attempts,
        last_attempt_at=iso_ms_or_none(d.last_attempt_at),
        next_attempt_at=iso_ms_or_none(d.next_attempt_at),
        response_status=d.response_status,
        error=d.error,
        created_at=iso_ms(d.created_at),
        alert_group_key=d.alert_group_key,
        alert_group_reason=d.alert_group_reason,
    )
    if attempts is not None:
        out.attempt_log = [
            AttemptOut(
                attempt=a.attempt,
                started_at=iso_ms(a.started_at),
                duration_ms=a.duration_ms,
                ok=a.ok,
                retryable=a.retryable,
                response_status=a.response_status,
                error=a.error,
            )
            for a in attempts
        ]
    return out


def enqueue(
    session: AsyncSession,
    env: DeliveryEnv,
    *,
    notifier_id: str,
    event: Event,
    monitor_id: str | None = None,
    monitor_event_id: str | None = None,
    alert_group_key: str | None = None,
    alert_group_reason: str | None = None,
) -> Delivery:
    """Add a due delivery to the session without committing: a monitor writes its state change and its
    deliveries in one transaction (outbox), as a routing flush does its group notifications; the worker
    sends them."""
    now = utcnow()
    delivery = Delivery(
        id=new_id("dlv_"),
        notifier_id=notifier_id,
        monitor_id=monitor_id,
        monitor_event_id=monitor_event_id,
        kind=event.webhook_type,
        event=msgspec.to_builtins(event),
        status="pending",
        attempts=0,
        max_attempts=env.settings.delivery_max_attempts,
        next_attempt_at=now,
        last_attempt_at=None,
        response_status=None,
        error=None,
        created_at=now,
        updated_at=now,
        alert_group_key=alert_group_key,
        alert_group_reason=alert_group_reason,
        stream=stream_of(notifier_id, monitor_id, alert_group_key),
    )
    session.add(delivery)
    return delivery


@dataclass(frozen=True)
class Queued:
    """A message to queue with `enqueue_many`."""

    notifier_id: str
    event: Event
    monitor_id: str | None = None
    monitor_event_id: str | None = None
    alert_group_key: str | None = None
    alert_group_reason: str | None = None
    monitor_ids: list[str] | None = None


_ENQUEUE = """
INSERT INTO deliveries (id, notifier_id, monitor_id, monitor_event_id, kind, event, status, attempts, max_attempts,
                        next_attempt_at, created_at, updated_at, alert_group_key, alert_group_reason, monitor_ids,
                        stream)
SELECT i, n, m, me, k, e::jsonb, 'pending', 0, $10, $11, $11, $11, gk, gr,
       CASE WHEN mi IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(mi::jsonb)) END, st
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
            $9::text[], $12::text[]) WITH ORDINALITY AS u(i, n, m, me, k, e, gk, gr, mi, st, o)
ORDER BY o
"""


async def enqueue_many(conn: asyncpg.Connection, env: DeliveryEnv, queued: Sequence[Queued]) -> list[str]:
    """`enqueue` for many messages in one statement on the caller's transaction (a routing flush's outbox: a
    thousand new groups are a thousand messages); their `seq` follows the order given. Returns their ids."""
    if not queued:
        return []
    ids = [new_id("dlv_") for _ in queued]
    await conn.execute(
        _ENQUEUE,
        ids,
        [q.notifier_id for q in queued],
        [q.monitor_id for q in queued],
        [q.monitor_event_id for q in queued],
        [q.event.webhook_type for q in queued],
        [msgspec.json.encode(q.event).decode() for q in queued],
        [q.alert_group_key for q in queued],
        [q.alert_group_reason for q in queued],
        [None if q.monitor_ids is None else msgspec.json.encode(q.monitor_ids).decode() for q in queued],
        env.settings.delivery_max_attempts,
        utcnow(),
        [stream_of(q.notifier_id, q.monitor_id, q.alert_group_key) for q in queued],
    )
    return ids


def test_event(env: DeliveryEnv, **fields: Any) -> Event:
    now = iso_ms(utcnow())
    return Event(**{"kind": "test", "time": now, "link": env.settings.base_url, **fields})


async def _attempt_log(session: AsyncSession, delivery_id: str) -> list[DeliveryAttempt]:
    stmt = select(DeliveryAttempt).where(DeliveryAttempt.delivery_id == delivery_id).order_by(DeliveryAttempt.attempt)
    return list((await session.execute(stmt)).scalars())


async def send_test(session: AsyncSession, env: DeliveryEnv, notifier_id: str) -> DeliveryOut:
    """Create a test delivery and attempt it now, in one transaction: the row is ours (invisible to the
    worker) until it is committed with its outcome. A retryable failure is then retried by the worker."""
    notifier = await notifiers.get_notifier(session, notifier_id)
    delivery = enqueue(session, env, notifier_id=notifier.id, event=test_event(env))
    await session.flush()
    await attempt(session, env, delivery)
    await session.commit()
    return to_out(delivery, await _attempt_log(session, delivery.id))


async def preview(session: AsyncSession, env: DeliveryEnv, notifier_id: str, event: Event | None) -> PreviewOut:
    notifier = await notifiers.get_notifier(session, notifier_id)
    adapter_cls = notifiers.adapter_for(env.notifiers, notifier.type)
    adapter = Destination.of(env, notifier, adapter_cls, utcnow()).adapter(env, "dlv_preview")
    fields = msgspec.structs.asdict(event) if event is not None else {}
    if not fields.get("time"):
        fields["time"] = iso_ms(utcnow())
    try:
        message = adapter.render(Event(**fields))
    except TemplateFailure as exc:
        raise BeaconError("template_error", str(exc)) from None
    hidden = adapter.secret_values()
    return PreviewOut(
        notifier_id=notifier.id,
        type=notifier.type,
        target=notifier.target,
        action=message.action,
        message=redact_value(message.payload, hidden),
        headers=redact_value(message.headers, hidden),
    )


async def get_delivery(session: AsyncSession, who: Principal, delivery_id: str) -> DeliveryOut:
    stmt = select(Delivery).where(Delivery.id == delivery_id, delivery_filter(who))
    delivery = (await session.execute(stmt)).scalar()
    if delivery is None:
        raise not_found("delivery", delivery_id)
    return to_out(delivery, await _attempt_log(session, delivery_id))


async def list_deliveries(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    *,
    notifier_id: str | None,
    monitor_id: str | None,
    status: str | None,
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[DeliveryOut]:
    if status is not None:
        check_choice(status, STATUSES, "status")
    stmt = select(Delivery).where(delivery_filter(who))
    if notifier_id is not None:
        stmt = stmt.where(Delivery.notifier_id == notifier_id)
    if monitor_id is not None:  # its own messages, and the routed ones that list its alerts
        stmt = stmt.where(or_(Delivery.monitor_id == monitor_id, Delivery.monitor_ids.contains([monitor_id])))
    if status is not None:
        stmt = stmt.where(Delivery.status == status)
    return await paginate(
        session,
        stmt,
        codec=codec,
        scope="deliveries:" + msgspec.json.encode([notifier_id, monitor_id, status]).decode(),
        keys=(Delivery.created_at, Delivery.id),
        render=to_out,
        limit=limit,
        cursor=cursor,
    )


async def list_for_notifier(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    notifier_id: str,
    *,
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[DeliveryOut]:
    await notifiers.get_notifier(session, notifier_id)
    return await list_deliveries(
        session, codec, who, notifier_id=notifier_id, monitor_id=None, status=None, limit=limit, cursor=cursor
    )


async def retry(session: AsyncSession, env: DeliveryEnv, who: Principal, delivery_id: str) -> DeliveryOut:
    """Send again now, with a fresh retry budget. Refused for a delivered message and while a worker is
    sending it (its lease is running, or the row is locked); 404, as for an unknown id, unless `who` may see
    the delivery's monitor's dataset (app/access.py). Sent at once, ahead of its stream's order: the user
    asked for this message."""
    mine = select(Delivery).where(Delivery.id == delivery_id, delivery_filter(who))
    delivery = (await session.execute(mine.with_for_update(skip_locked=True, of=Delivery))).scalar_one_or_none()
    if delivery is None:
        # Rare: unknown, not visible, or locked by a worker (only then is it looked up a second time).
        if (await session.execute(mine.with_only_columns(Delivery.id))).scalar() is None:
            raise not_found("delivery", delivery_id)
        raise BeaconError("conflict", "This delivery is being sent right now; look again in a moment.")
    if delivery.claimed_until is not None and delivery.claimed_until > utcnow():
        raise BeaconError("conflict", "This delivery is being sent right now; look again in a moment.")
    if delivery.status == "succeeded":
        raise BeaconError("conflict", "This delivery has already succeeded; nothing to retry.")
    delivery.status = "pending"
    delivery.max_attempts = delivery.attempts + env.settings.delivery_max_attempts
    delivery.next_attempt_at = utcnow()
    await attempt(session, env, delivery)
    await session.commit()
    return to_out(delivery, await _attempt_log(session, delivery.id))


async def pending_deliveries(engine: AsyncEngine) -> int | None:
    """Deliveries still to send, deferred ones too (the `/metrics` queue depth); None while the database cannot be
    reached, so a scrape still answers with the process's own metrics."""
    try:
        async with engine.connect() as conn:
            found = await conn.scalar(select(func.count()).select_from(Delivery).where(Delivery.status.in_(OPEN)))
    except (OSError, DBAPIError):
        return None
    return int(found or 0)

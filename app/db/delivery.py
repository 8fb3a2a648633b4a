from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, FetchedValue, ForeignKey, Integer, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Delivery(Base):
    """One message to one notifier: the outbox row the worker sends, and its log afterwards."""

    __tablename__ = "deliveries"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    notifier_id: Mapped[str] = mapped_column(Text)
    monitor_id: Mapped[str | None] = mapped_column(Text)
    monitor_event_id: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(Text)
    event: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer)
    max_attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime | None]
    last_attempt_at: Mapped[datetime | None]
    response_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # A routed group notification: the group it reports and why it was sent (first, new_alerts, resolved, repeat).
    alert_group_key: Mapped[str | None] = mapped_column(Text, default=None)
    alert_group_reason: Mapped[str | None] = mapped_column(Text, default=None)
    # The monitors whose alerts the message lists (a routed monitor's page lists what its team got).
    monitor_ids: Mapped[list[str] | None] = mapped_column(ARRAY(Text), default=None)
    # The messages that must arrive in the order they were made: (monitor or group) x notifier (see
    # app/deliveries/streams.py); `seq` is that order, given by the database at insert.
    stream: Mapped[str | None] = mapped_column(Text, default=None)
    seq: Mapped[int] = mapped_column(BigInteger, server_default=FetchedValue())
    # The lease of the worker sending it now: no transaction is held during a send (app/deliveries/worker.py).
    claimed_until: Mapped[datetime | None] = mapped_column(default=None)
    claim_token: Mapped[str | None] = mapped_column(Text, default=None)


class DeliveryAttempt(Base):
    __tablename__ = "delivery_attempts"

    delivery_id: Mapped[str] = mapped_column(Text, ForeignKey("deliveries.id", ondelete="CASCADE"), primary_key=True)
    attempt: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime]
    duration_ms: Mapped[int] = mapped_column(Integer)
    ok: Mapped[bool]
    retryable: Mapped[bool]
    response_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from adapters.contract import Event
from app.schemas import RequestBody

# deferred: waiting for its notifier's mute to end; superseded: not sent, a later message of its stream said
# what is still true (app/deliveries/streams.py).
STATUSES = ("pending", "retrying", "deferred", "succeeded", "failed", "superseded")


class AttemptOut(msgspec.Struct, kw_only=True):
    attempt: int
    started_at: str
    duration_ms: int
    ok: bool
    retryable: bool
    response_status: int | None
    error: str | None


class DeliveryOut(msgspec.Struct, kw_only=True):
    object: str = "delivery"
    id: str
    notifier_id: str
    monitor_id: str | None
    monitor_event_id: str | None
    kind: str
    status: str
    attempts: int
    last_attempt_at: str | None
    next_attempt_at: str | None
    response_status: int | None
    error: str | None
    created_at: str
    # A routed group notification: its group key and why it was sent (first, new_alerts, resolved, repeat).
    alert_group_key: str | None = None
    alert_group_reason: str | None = None
    # Each attempt (status code, error, duration): in single-delivery answers, not in lists.
    attempt_log: list[AttemptOut] | UnsetType = UNSET


class PreviewRequest(RequestBody):
    """Any subset of the event fields (see adapters.base.Event); the rest are a test event's defaults."""

    event: Event | None = None


class PreviewOut(msgspec.Struct, kw_only=True):
    object: str = "notifier_preview"
    notifier_id: str
    type: str
    target: str
    action: str
    message: dict[str, Any]
    headers: dict[str, str]

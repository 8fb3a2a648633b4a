from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UnsetType

from beacon_client.call import Call, TimeArg, decode, json_call, no_content, query_string, segment
from beacon_client.models import Delivery, Notifier, NotifierCreated, NotifierPreview, Page


def create_notifier(
    name: str,
    type: str,
    config: Mapping[str, Any],
    *,
    disabled_until: TimeArg | None = None,
    send_resolved: bool | None = None,
) -> Call[NotifierCreated]:
    """Register a destination; a webhook notifier's `signing_secret` is in the result, shown this once.
    `send_resolved`: whether it is told of resolved alerts (None: its type's default)."""
    extra: dict[str, Any] = {"disabled_until": disabled_until} if disabled_until is not None else {}
    if send_resolved is not None:
        extra["send_resolved"] = send_resolved
    return json_call(
        "POST", "/v1/notifiers", decode(NotifierCreated), name=name, type=type, config=dict(config), **extra
    )


def list_notifiers(
    *, type: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Call[Page[Notifier]]:
    params = query_string(type=type, limit=limit, cursor=cursor)
    return Call("GET", "/v1/notifiers", decode(Page[Notifier]), params=params)


def get_notifier(notifier_id: str) -> Call[Notifier]:
    return Call("GET", f"/v1/notifiers/{segment(notifier_id)}", decode(Notifier))


def update_notifier(
    notifier_id: str,
    *,
    name: str | UnsetType = msgspec.UNSET,
    config: Mapping[str, Any] | UnsetType = msgspec.UNSET,
    disabled_until: TimeArg | UnsetType | None = msgspec.UNSET,
    send_resolved: bool | UnsetType = msgspec.UNSET,
) -> Call[Notifier]:
    return json_call(
        "PATCH",
        f"/v1/notifiers/{segment(notifier_id)}",
        decode(Notifier),
        name=name,
        config=dict(config) if not isinstance(config, UnsetType) else config,
        disabled_until=disabled_until,
        send_resolved=send_resolved,
    )


def delete_notifier(notifier_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/notifiers/{segment(notifier_id)}", no_content)


def rotate_notifier_secret(notifier_id: str) -> Call[NotifierCreated]:
    """A new signing secret, shown this once; the previous one keeps signing for 24 hours."""
    return Call("POST", f"/v1/notifiers/{segment(notifier_id)}/rotate-secret", decode(NotifierCreated))


def test_notifier(notifier_id: str) -> Call[Delivery]:
    """Send a test message now; the delivery tells how it went."""
    return Call("POST", f"/v1/notifiers/{segment(notifier_id)}/test", decode(Delivery))


def preview_notifier(notifier_id: str, *, event: Mapping[str, Any] | None = None) -> Call[NotifierPreview]:
    """The message the notifier would send, rendered but not sent; `event` overrides a test event's fields."""
    extra = {"event": dict(event)} if event is not None else {}
    return json_call("POST", f"/v1/notifiers/{segment(notifier_id)}/preview", decode(NotifierPreview), **extra)


def list_notifier_deliveries(
    notifier_id: str, *, limit: int | None = None, cursor: str | None = None
) -> Call[Page[Delivery]]:
    return Call(
        "GET",
        f"/v1/notifiers/{segment(notifier_id)}/deliveries",
        decode(Page[Delivery]),
        params=query_string(limit=limit, cursor=cursor),
    )

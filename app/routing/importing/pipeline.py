"""The two fields an import carries that arrive with the pipeline branch (issue 26): a notifier's
`send_resolved` and the routing document's `resolve_timeout_seconds` (Alertmanager's `global.resolve_timeout`).

Until Beacon has them, an import cannot store them: a value Beacon would not honour then (send_resolved false,
a resolve timeout other than Beacon's fixed 5 minutes) is listed as a loss, and nothing else changes. Once they
exist, they are stored here, the one place that passes them on, and those losses go away by themselves.
"""

from __future__ import annotations

from typing import Any

import msgspec

from app.db.notifier import Notifier
from app.routing import document as d
from app.routing.store import RESOLVE_TIMEOUT

SEND_RESOLVED_MISSING = (
    "Beacon does not store send_resolved yet (it arrives with issue 26): this notifier would also be sent "
    "the group's resolved notifications"
)
RESOLVE_TIMEOUT_MISSING = (
    "Beacon does not store resolve_timeout yet (it arrives with issue 26): an alert posted without endsAt "
    f"resolves {int(RESOLVE_TIMEOUT.total_seconds())} s after its last post"
)


def stores_send_resolved() -> bool:
    return hasattr(Notifier, "send_resolved")


def stores_resolve_timeout() -> bool:
    return "resolve_timeout_seconds" in d.Document.__struct_fields__


def set_send_resolved(notifier: Notifier, send_resolved: bool) -> None:
    if stores_send_resolved():
        notifier.send_resolved = send_resolved  # type: ignore[attr-defined]


def stored_send_resolved(notifier: Notifier) -> bool | None:
    return getattr(notifier, "send_resolved", None) if stores_send_resolved() else None


def with_resolve_timeout(document: d.Document, seconds: int) -> d.Document:
    if not stores_resolve_timeout():
        return document
    changes: dict[str, Any] = {"resolve_timeout_seconds": seconds}
    return msgspec.structs.replace(document, **changes)

"""The Beacon Python client: `from beacon_client import Client, AsyncClient` (`pip install ./client`).

    with Client("http://127.0.0.1:8000", token) as beacon:
        beacon.create_annotation("deploy", "v1.2.3", ["web"])
        with beacon.ingester("web") as ing:
            for event in events:
                ing.add(event)
        print(beacon.query("['web'] | count").rows)

Every `/v1` endpoint is a method (async ones on `AsyncClient`); errors raise `BeaconAPIError` carrying the
error envelope; 429, 5xx and connection errors are retried with the reference back-off (5 retries).

The names below are loaded when first used (PEP 562), so that what needs only a part loads only that part:
`beacon --help` and the server (which reads the shared notations in beacon_client.notation) load neither httpx
nor msgspec, and `from beacon_client import Client` loads the blocking client without the asyncio one.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beacon_client.aio import AsyncClient
    from beacon_client.backoff import Backoff
    from beacon_client.batching import MAX_BYTES, MAX_EVENTS
    from beacon_client.errors import (
        BeaconAPIError,
        BeaconClientError,
        BeaconConnectionError,
        IngestBatchError,
        WebhookVerificationError,
    )
    from beacon_client.ingest import (
        AsyncIngester,
        EventFailure,
        Ingester,
        IngestTotals,
    )
    from beacon_client.models import (
        Alert,
        AlertGroup,
        AlertSource,
        AlertsReceived,
        Annotation,
        Column,
        Dataset,
        DatasetInfo,
        Delivery,
        DeliveryAttempt,
        Field,
        ImportLoss,
        ImportNotifier,
        IngestFailure,
        IngestResult,
        Monitor,
        MonitorEvent,
        MonitorSaved,
        Notifier,
        NotifierCreated,
        NotifierPreview,
        Page,
        QueryResult,
        QueryStatus,
        RecentChange,
        ResultWarning,
        RouteMatch,
        Routing,
        RoutingImport,
        RoutingTest,
        Silence,
        Token,
        TokenCreated,
        TriggerAfter,
    )
    from beacon_client.sync import Client
    from beacon_client.webhooks import sign as sign_webhook
    from beacon_client.webhooks import verify_webhook

# Public name -> the module defining it (`module:name` where the name there differs).
_WHERE: dict[str, str] = {
    "AsyncClient": "aio",
    "Backoff": "backoff",
    "MAX_BYTES": "batching",
    "MAX_EVENTS": "batching",
    "BeaconAPIError": "errors",
    "BeaconClientError": "errors",
    "BeaconConnectionError": "errors",
    "IngestBatchError": "errors",
    "WebhookVerificationError": "errors",
    "AsyncIngester": "ingest",
    "EventFailure": "ingest",
    "Ingester": "ingest",
    "IngestTotals": "ingest",
    "Alert": "models",
    "AlertGroup": "models",
    "AlertSource": "models",
    "AlertsReceived": "models",
    "Annotation": "models",
    "Column": "models",
    "Dataset": "models",
    "DatasetInfo": "models",
    "Delivery": "models",
    "DeliveryAttempt": "models",
    "Field": "models",
    "ImportLoss": "models",
    "ImportNotifier": "models",
    "IngestFailure": "models",
    "IngestResult": "models",
    "Monitor": "models",
    "MonitorEvent": "models",
    "MonitorSaved": "models",
    "Notifier": "models",
    "NotifierCreated": "models",
    "NotifierPreview": "models",
    "Page": "models",
    "QueryResult": "models",
    "QueryStatus": "models",
    "RecentChange": "models",
    "ResultWarning": "models",
    "RouteMatch": "models",
    "Routing": "models",
    "RoutingImport": "models",
    "RoutingTest": "models",
    "Silence": "models",
    "Token": "models",
    "TokenCreated": "models",
    "TriggerAfter": "models",
    "Client": "sync",
    "verify_webhook": "webhooks",
    "sign_webhook": "webhooks:sign",
}

__all__ = [
    "MAX_BYTES",
    "MAX_EVENTS",
    "Alert",
    "AlertGroup",
    "AlertSource",
    "AlertsReceived",
    "Annotation",
    "AsyncClient",
    "AsyncIngester",
    "Backoff",
    "BeaconAPIError",
    "BeaconClientError",
    "BeaconConnectionError",
    "Client",
    "Column",
    "Dataset",
    "DatasetInfo",
    "Delivery",
    "DeliveryAttempt",
    "EventFailure",
    "Field",
    "ImportLoss",
    "ImportNotifier",
    "IngestBatchError",
    "IngestFailure",
    "IngestResult",
    "IngestTotals",
    "Ingester",
    "Monitor",
    "MonitorEvent",
    "MonitorSaved",
    "Notifier",
    "NotifierCreated",
    "NotifierPreview",
    "Page",
    "QueryResult",
    "QueryStatus",
    "RecentChange",
    "ResultWarning",
    "RouteMatch",
    "Routing",
    "RoutingImport",
    "RoutingTest",
    "Silence",
    "Token",
    "TokenCreated",
    "TriggerAfter",
    "WebhookVerificationError",
    "sign_webhook",
    "verify_webhook",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'beacon_client' has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    value = getattr(import_module(f"beacon_client.{module}"), attribute or name)
    globals()[name] = value  # found once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})

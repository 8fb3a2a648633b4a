"""The Beacon Python client: `from app.client import Client, AsyncClient`.

    with Client("http://127.0.0.1:8000", token) as beacon:
        beacon.create_annotation("deploy", "v1.2.3", ["web"])
        with beacon.ingester("web") as ing:
            for event in events:
                ing.add(event)
        print(beacon.query("['web'] | count").rows)

Every `/v1` endpoint is a method (async ones on `AsyncClient`); errors raise `BeaconAPIError` carrying the
error envelope; 429, 5xx and connection errors are retried with the reference back-off (5 retries).
"""

from app.client.aio import AsyncClient
from app.client.backoff import Backoff
from app.client.batching import MAX_BYTES, MAX_EVENTS
from app.client.errors import (
    BeaconAPIError,
    BeaconClientError,
    BeaconConnectionError,
    IngestBatchError,
    WebhookVerificationError,
)
from app.client.ingest import AsyncIngester, EventFailure, Ingester, IngestTotals
from app.client.models import (
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
    Notifier,
    NotifierCreated,
    NotifierPreview,
    Page,
    QueryResult,
    QueryStatus,
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
from app.client.sync import Client
from app.client.webhooks import sign as sign_webhook
from app.client.webhooks import verify_webhook

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
    "Notifier",
    "NotifierCreated",
    "NotifierPreview",
    "Page",
    "QueryResult",
    "QueryStatus",
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

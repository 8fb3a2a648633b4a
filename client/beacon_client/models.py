"""What the service returns, as msgspec Structs (see the API contract). Fields the service adds later are
ignored rather than rejected, so an older client keeps working against a newer server."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, TypeVar

import msgspec

T = TypeVar("T")


class Resource(msgspec.Struct, kw_only=True):
    object: str = ""


class Page(Resource, Generic[T], kw_only=True):
    """One page of a list; pass `next_cursor` as `cursor` for the next (None on the last page)."""

    data: list[T]
    has_more: bool
    next_cursor: str | None = None


class Token(Resource, kw_only=True):
    id: str
    name: str
    scopes: list[str]
    datasets: list[str] | None = None
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    issuer_id: str | None = None  # the token that made this one; None for a token made with the CLI's direct path


class TokenCreated(Token, kw_only=True):
    token: str  # the token text: shown in this response only


class Dataset(Resource, kw_only=True):
    name: str
    created_at: datetime | None = None
    description: str | None = None
    retention_days: int | None = None


class DatasetInfo(Dataset, kw_only=True):
    fields_count: int | None = None
    events_estimate: int | None = None
    min_time: datetime | None = None
    max_time: datetime | None = None


class Field(Resource, kw_only=True):
    name: str
    types: list[str]
    first_seen: datetime | None = None


class ResultWarning(msgspec.Struct, kw_only=True):
    """Something accepted that is probably not what was meant (a field the dataset never had, events stamped
    with their arrival time although they carry a time field): `code`, `message`, and what it is about."""

    code: str
    message: str
    field: str | None = None
    suggestion: str | None = None  # the closest known name
    param: str | None = None  # the request parameter that would change the outcome


class IngestFailure(msgspec.Struct, kw_only=True):
    index: int  # position of the event in the request
    error: str


class IngestResult(Resource, kw_only=True):
    dataset: str
    ingested: int
    failed: int
    failures: list[IngestFailure] = msgspec.field(default_factory=list)
    processed_bytes: int = 0
    blocks_created: int = 0
    warnings: list[ResultWarning] = msgspec.field(default_factory=list)


class Column(msgspec.Struct, kw_only=True):
    name: str
    type: str


class QueryStatus(msgspec.Struct, kw_only=True):
    rows_examined: int | None = None
    rows_returned: int | None = None
    truncated: bool = False
    elapsed_ms: float | None = None
    min_time: datetime | None = None
    max_time: datetime | None = None


class QueryResult(Resource, kw_only=True):
    columns: list[Column]
    rows: list[list[Any]]
    status: QueryStatus = msgspec.field(default_factory=QueryStatus)
    warnings: list[ResultWarning] = msgspec.field(default_factory=list)  # e.g. fields the dataset never had

    def records(self) -> list[dict[str, Any]]:
        """The rows as {column name: value} dicts."""
        names = [c.name for c in self.columns]
        return [dict(zip(names, row, strict=False)) for row in self.rows]


class Annotation(Resource, kw_only=True):
    id: str
    type: str
    title: str
    datasets: list[str]
    time: datetime
    end_time: datetime | None = None
    url: str | None = None
    description: str | None = None
    created_at: datetime | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    origin: str | None = None
    silence_id: str | None = None


class Notifier(Resource, kw_only=True):
    id: str
    name: str
    type: str
    target: str | None = None
    send_resolved: bool | None = None  # whether resolved alerts are sent (the type's default unless set)
    disabled_until: datetime | None = None
    disabled_reason: str | None = None  # why Beacon disabled it by itself (a webhook's 410 Gone)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class NotifierCreated(Notifier, kw_only=True):
    """The answer to creating a notifier or rotating its secret: a webhook's signing secret, shown this once."""

    signing_secret: str | None = None
    previous_secret_expires_at: datetime | None = None  # after a rotation: the old secret signs until then


class TriggerAfter(msgspec.Struct, kw_only=True):
    m: int = 1
    n: int = 1


class Monitor(Resource, kw_only=True):
    id: str
    name: str
    type: str
    apl: str
    description: str | None = None
    operator: str | None = None
    threshold: float | None = None
    interval_seconds: int = 60
    range_seconds: int | None = None
    delay_seconds: int = 0
    notifier_ids: list[str] = msgspec.field(default_factory=list)
    alert_on_no_data: bool = False
    notify_by_group: bool = False
    resolvable: bool = True
    trigger_after: TriggerAfter = msgspec.field(default_factory=TriggerAfter)
    repeat_interval_seconds: int | None = None
    disabled_until: datetime | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    dataset: str | None = None  # the dataset the query reads
    state: str | None = None
    alerting_groups: list[dict[str, Any]] = msgspec.field(default_factory=list)  # with notify_by_group
    last_value: float | None = None
    last_error: str | None = None  # in state `error`: why the query failed
    last_evaluated_at: datetime | None = None
    next_evaluation_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class MonitorSaved(Monitor, kw_only=True):
    """The answer to creating or updating a monitor: the monitor, and what looks wrong in its query."""

    warnings: list[ResultWarning] = msgspec.field(default_factory=list)  # e.g. a field the dataset never had


class MonitorEvent(Resource, kw_only=True):
    id: str | None  # None in a dry-run evaluation's events (nothing was written)
    monitor_id: str
    kind: str
    state: str | None = None
    value: float | None = None
    threshold: float | None = None
    group: Any = None
    time: datetime
    start_time: datetime | None = None  # the time range the run read
    end_time: datetime | None = None
    match_count: int | None = None  # match_event: the events this run found
    matches: list[dict[str, Any]] = msgspec.field(default_factory=list)  # match_event: a sample of them
    error: str | None = None
    deliveries: list[str] = msgspec.field(default_factory=list)


class DeliveryAttempt(msgspec.Struct, kw_only=True):
    attempt: int
    started_at: datetime
    duration_ms: int = 0
    ok: bool = False
    retryable: bool = False
    response_status: int | None = None
    error: str | None = None


class NotifierPreview(Resource, kw_only=True):
    """The message a notifier would send (nothing sent)."""

    notifier_id: str
    type: str
    target: str | None = None
    action: str | None = None
    message: dict[str, Any] = msgspec.field(default_factory=dict)
    headers: dict[str, str] = msgspec.field(default_factory=dict)


class Delivery(Resource, kw_only=True):
    id: str
    notifier_id: str
    status: str
    kind: str | None = None
    monitor_id: str | None = None
    monitor_event_id: str | None = None
    attempts: int = 0
    last_attempt_at: datetime | None = None
    next_attempt_at: datetime | None = None
    response_status: int | None = None
    error: str | None = None
    created_at: datetime | None = None
    # A routed group notification: its group key and why it was sent (first, new_alerts, resolved, repeat).
    alert_group_key: str | None = None
    alert_group_reason: str | None = None
    attempt_log: list[DeliveryAttempt] = msgspec.field(default_factory=list)  # in single-delivery answers


class RecentChange(msgspec.Struct, kw_only=True):
    """An annotation related to alerts (a deploy, a config change …): what it is, when, and why it relates."""

    id: str
    type: str
    title: str
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    datasets: list[str] = msgspec.field(default_factory=list)  # ["*"]: environment-wide
    time: datetime
    end_time: datetime | None = None
    url: str | None = None
    when: str = ""  # in words: "4 min before the first alert"
    why: str = ""  # "dataset web", "service=checkout", or both


class AlertSource(msgspec.Struct, kw_only=True):
    type: str  # monitor | external
    monitor_id: str | None = None


class Alert(Resource, kw_only=True):
    """An alert and its state now; a suppressed one says why (silences, inhibiting alerts, mute intervals)."""

    fingerprint: str
    labels: dict[str, str]
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    state: str  # firing | suppressed | resolved
    starts_at: datetime
    ends_at: datetime | None = None
    updated_at: datetime | None = None
    source: AlertSource = msgspec.field(default_factory=lambda: AlertSource(type="external"))
    silenced_by: list[str] = msgspec.field(default_factory=list)
    inhibited_by: list[str] = msgspec.field(default_factory=list)
    muted_by: list[str] = msgspec.field(default_factory=list)
    generator_url: str | None = None
    # What changed before it (related annotations, newest first, at most 5) and how many more: in the answer
    # about one alert (`get_alert`), not in lists.
    changes: list[RecentChange] = msgspec.field(default_factory=list)
    more_changes: int = 0


class AlertsReceived(Resource, kw_only=True):
    received: int
    fingerprints: list[str]


class AlertGroup(Resource, kw_only=True):
    """Alerts the routing tree groups together now: one route and one set of `group_by` values."""

    group_key: str
    route: str
    labels: dict[str, str]
    notifier_ids: list[str]
    muted_by: list[str] = msgspec.field(default_factory=list)
    alerts: list[Alert]
    changes_window_seconds: int = 0  # how far back its message looks for changes
    changes: list[RecentChange] = msgspec.field(default_factory=list)  # what its message would say changed
    more_changes: int = 0


class Silence(Resource, kw_only=True):
    id: str
    matchers: list[str]
    starts_at: datetime
    ends_at: datetime
    comment: str
    created_by: str
    state: str  # pending | active | expired
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Routing(Resource, kw_only=True):
    """The routing document (`route`, `inhibit_rules`, `time_intervals` as the API shows them); pass `version`
    to `put_routing` to replace it."""

    version: str
    route: dict[str, Any]
    resolve_timeout_seconds: int = 300
    inhibit_rules: list[dict[str, Any]] = msgspec.field(default_factory=list)
    time_intervals: list[dict[str, Any]] = msgspec.field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "resolve_timeout_seconds": self.resolve_timeout_seconds,
            "inhibit_rules": self.inhibit_rules,
            "time_intervals": self.time_intervals,
        }


class ImportLoss(msgspec.Struct, kw_only=True):
    path: str  # where it is in the imported YAML, e.g. receivers[2].slack_configs[0].channel
    reason: str


class ImportNotifier(msgspec.Struct, kw_only=True):
    name: str
    type: str
    action: str  # create | update | keep
    id: str | None = None  # None on a dry run for a notifier not created yet
    receiver: str
    source: str  # the integration in the YAML, e.g. receivers[0].webhook_configs[0]
    target: str
    send_resolved: bool
    signing_secret: str | None = None  # a webhook created by this import: its signing secret, shown once


class RoutingImport(Resource, kw_only=True):
    """The plan of an Alertmanager configuration's import, and what was stored unless it was a dry run."""

    dry_run: bool
    applied: bool
    document_changed: bool
    version: str
    notifiers: list[ImportNotifier]
    document: dict[str, Any]
    resolve_timeout_seconds: int
    losses: list[ImportLoss] = msgspec.field(default_factory=list)


class RouteMatch(msgspec.Struct, kw_only=True):
    route: str  # where the route is in the document, e.g. route.routes[1]
    route_key: str
    notifier_ids: list[str]
    group_by: list[str]
    group_key: str
    group_labels: dict[str, str] = msgspec.field(default_factory=dict)
    group_wait_seconds: int
    group_interval_seconds: int
    repeat_interval_seconds: int | None  # None: never (a monitor's own route without a repeat interval)
    muted_by: list[str] = msgspec.field(default_factory=list)
    changes_window_seconds: int = 0


class RoutingTest(Resource, kw_only=True):
    """What the tree would do with an alert of these labels now (nothing stored or sent)."""

    fingerprint: str
    routes: list[RouteMatch]
    notifier_ids: list[str]
    silenced_by: list[str] = msgspec.field(default_factory=list)
    inhibited_by: list[str] = msgspec.field(default_factory=list)
    muted_by: list[str] = msgspec.field(default_factory=list)
    silenced: bool = False
    inhibited: bool = False
    muted: bool = False
    # What its messages would say changed, if it fired now (over the longest window of its routes).
    changes: list[RecentChange] = msgspec.field(default_factory=list)
    more_changes: int = 0

"""Request and response Structs of /v1/alerts, /v1/silences and /v1/routing."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from adapters.contract import RecentChange
from app.schemas import AwareDatetime, RequestBody

MAX_ALERTS_PER_POST = 10_000
MAX_MATCHERS = 64
Matchers = Annotated[list[Annotated[str, msgspec.Meta(max_length=2048)]], msgspec.Meta(max_length=MAX_MATCHERS)]
Comment = Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
LabelMap = dict[str, str]
ALERT_STATES = ("firing", "suppressed", "resolved")
SILENCE_STATES = ("pending", "active", "expired")


class AlertPost(RequestBody):
    labels: LabelMap
    annotations: LabelMap = msgspec.field(default_factory=dict)
    starts_at: AwareDatetime | None = None
    ends_at: AwareDatetime | None = None
    generator_url: Annotated[str, msgspec.Meta(max_length=2048)] | None = None


# gc=False: views build one per alert (12,000 in an outage), and the collector walking them held the event loop for
# tens of milliseconds a pass; they hold strings, and lists and dicts of strings, never a cycle.
class AlertSource(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    type: str  # monitor | external
    monitor_id: str | None = None


class AlertOut(msgspec.Struct, kw_only=True, gc=False):
    object: str = "alert"
    fingerprint: str
    labels: LabelMap
    annotations: LabelMap
    state: str  # firing | suppressed | resolved
    starts_at: str
    ends_at: str | None
    updated_at: str
    source: AlertSource
    silenced_by: list[str]
    inhibited_by: list[str]
    muted_by: list[str]
    generator_url: str | None
    # What changed before it (related annotations, newest first, at most 5) and how many more: in the answer
    # about one alert, not in lists.
    changes: list[RecentChange] | UnsetType = UNSET
    more_changes: int | UnsetType = UNSET


class AlertsReceived(msgspec.Struct, kw_only=True):
    object: str = "alerts_received"
    received: int
    fingerprints: list[str]


class AlertGroupOut(msgspec.Struct, kw_only=True, gc=False):
    """A group as the tree forms it now: one route and one set of `group_by` values."""

    object: str = "alert_group"
    group_key: str
    route: str  # where the route is in the document, e.g. route.routes[1]
    labels: LabelMap
    notifier_ids: list[str]
    muted_by: list[str]
    alerts: list[AlertOut]
    changes_window_seconds: int = 0
    changes: list[RecentChange] = msgspec.field(default_factory=list)  # what its message would say changed
    more_changes: int = 0


class SilenceCreate(RequestBody):
    matchers: Matchers
    ends_at: AwareDatetime
    comment: Comment
    starts_at: AwareDatetime | None = None
    created_by: Annotated[str, msgspec.Meta(min_length=1, max_length=256)] | None = None


class SilenceUpdate(RequestBody):
    matchers: Matchers | UnsetType = UNSET
    starts_at: AwareDatetime | UnsetType = UNSET
    ends_at: AwareDatetime | UnsetType = UNSET
    comment: Comment | UnsetType = UNSET


class SilenceOut(msgspec.Struct, kw_only=True):
    object: str = "silence"
    id: str
    matchers: list[str]
    starts_at: str
    ends_at: str
    comment: str
    created_by: str
    state: str
    created_at: str
    updated_at: str


class RoutingTestRequest(RequestBody):
    labels: LabelMap


class RouteMatch(msgspec.Struct, kw_only=True):
    route: str  # where it is in the document
    route_key: str
    notifier_ids: list[str]
    group_by: list[str]
    group_key: str
    group_labels: LabelMap
    group_wait_seconds: int
    group_interval_seconds: int  # 0: a monitor's own route (a change is sent at once)
    repeat_interval_seconds: int | None  # None: never (a monitor's own route without a repeat interval)
    muted_by: list[str]
    changes_window_seconds: int = 0


class RoutingTestOut(msgspec.Struct, kw_only=True):
    object: str = "routing_test"
    fingerprint: str
    routes: list[RouteMatch]
    notifier_ids: list[str]
    silenced_by: list[str]
    inhibited_by: list[str]
    muted_by: list[str]
    silenced: bool
    inhibited: bool
    muted: bool  # every route it takes is muted now
    # What its messages would say changed, if it fired now (over the longest window of its routes).
    changes: list[RecentChange] = msgspec.field(default_factory=list)
    more_changes: int = 0


class RoutingStatus(msgspec.Struct, kw_only=True):
    """What a status page (and /api/v2/status) shows about routing."""

    object: str = "routing_status"
    version: str
    updated_at: str
    alerts_firing: int
    alerts_resolved: int
    groups: int
    silences_active: int
    silences_pending: int
    counters: dict[str, Any]

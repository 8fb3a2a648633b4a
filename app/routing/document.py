"""The routing document as JSON: the route tree, inhibit rules and time intervals (shapes only; the rules that
span fields are checked in app/routing/tree.py)."""

from __future__ import annotations

from typing import Annotated

import msgspec

Seconds = int
Names = list[Annotated[str, msgspec.Meta(min_length=1, max_length=256)]]
MatcherList = list[Annotated[str, msgspec.Meta(max_length=2048)]]

DEFAULT_GROUP_WAIT = 30
DEFAULT_GROUP_INTERVAL = 300
DEFAULT_REPEAT_INTERVAL = 14_400
DEFAULT_RESOLVE_TIMEOUT = 300  # Alertmanager's global.resolve_timeout
MAX_TIMER_SECONDS = 30 * 86_400
DEFAULT_CHANGES_WINDOW = 3_600  # how far before an alert a change is told of (app/annotations/changes.py)
MAX_CHANGES_WINDOW = 7 * 86_400
MAX_ROUTES = 2_000


class Doc(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Base of the document's parts: unknown fields are refused, unset optional ones are left out when shown."""


class Route(Doc):
    matchers: MatcherList = msgspec.field(default_factory=list)
    notifier_ids: Names | None = None  # None: inherited from the parent
    group_by: Names | None = None
    group_wait_seconds: Seconds | None = None
    group_interval_seconds: Seconds | None = None
    repeat_interval_seconds: Seconds | None = None
    # How far before the first alert of a notification its "Recent changes" reach (0: none); inherited.
    changes_window_seconds: Seconds | None = None
    continue_: bool = msgspec.field(default=False, name="continue")
    mute_time_intervals: Names = msgspec.field(default_factory=list)
    active_time_intervals: Names = msgspec.field(default_factory=list)
    routes: list[Route] = msgspec.field(default_factory=list)


class InhibitRule(Doc):
    source_matchers: MatcherList
    target_matchers: MatcherList
    equal: Names = msgspec.field(default_factory=list)


class TimeRange(Doc):
    start_time: str
    end_time: str


class Interval(Doc):
    times: list[TimeRange] | None = None
    weekdays: list[str] | None = None
    days_of_month: list[str] | None = None
    months: list[str] | None = None
    years: list[str] | None = None
    location: str | None = None


class TimeInterval(Doc):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    intervals: list[Interval]


class Document(Doc, omit_defaults=False, kw_only=True):
    """What `PUT /v1/routing` takes (`object` and `version` from a `GET` may come along and are ignored).
    Shown whole: empty `inhibit_rules` and `time_intervals` are listed, unlike a route's unset fields."""

    object: str | None = None
    version: str | None = None
    route: Route
    resolve_timeout_seconds: Annotated[int, msgspec.Meta(ge=1, le=MAX_TIMER_SECONDS)] = DEFAULT_RESOLVE_TIMEOUT
    inhibit_rules: list[InhibitRule] = msgspec.field(default_factory=list)
    time_intervals: list[TimeInterval] = msgspec.field(default_factory=list)


def default_document() -> Document:
    return Document(
        route=Route(
            notifier_ids=[],
            group_by=["alertname"],
            group_wait_seconds=DEFAULT_GROUP_WAIT,
            group_interval_seconds=DEFAULT_GROUP_INTERVAL,
            repeat_interval_seconds=DEFAULT_REPEAT_INTERVAL,
        )
    )

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from app.result_warnings import ResultWarning
from app.schemas import AwareDatetime, RequestBody

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Description = Annotated[str, msgspec.Meta(max_length=2048)]
Apl = Annotated[str, msgspec.Meta(min_length=1, max_length=100_000)]
MonitorType = Literal["threshold", "match_event"]
Operator = Literal["above", "above_or_equal", "below", "below_or_equal"]
# Whole seconds: an interval of at least 10 s and at most a day; a range of at most 30 days.
Interval = Annotated[int, msgspec.Meta(ge=10, le=86_400)]
Range = Annotated[int, msgspec.Meta(ge=1, le=30 * 86_400)]
Delay = Annotated[int, msgspec.Meta(ge=0, le=86_400)]
Repeat = Annotated[int, msgspec.Meta(ge=10, le=30 * 86_400)]  # re-send a firing alert at most this often
NotifierIds = Annotated[list[Annotated[str, msgspec.Meta(min_length=1, max_length=64)]], msgspec.Meta(max_length=50)]
Finite = Annotated[float, msgspec.Meta(ge=-1e300, le=1e300)]  # JSON has no infinity; NaN fails both bounds
Labels = dict[str, str]  # routing labels, checked by app/monitors/alerting.py

STATES = ("ok", "alerting", "no_data", "error")


class TriggerAfter(RequestBody):
    """Alert when at least `m` of the last `n` runs breached the threshold."""

    m: Annotated[int, msgspec.Meta(ge=1, le=100)] = 1
    n: Annotated[int, msgspec.Meta(ge=1, le=100)] = 1


class MonitorCreate(RequestBody):
    name: Name
    type: MonitorType
    apl: Apl
    notifier_ids: NotifierIds
    description: Description | None = None
    operator: Operator | None = None
    threshold: Finite | None = None
    interval_seconds: Interval = 60
    range_seconds: Range | None = None  # default: the interval
    delay_seconds: Delay = 0
    alert_on_no_data: bool = False
    notify_by_group: bool = False
    resolvable: bool = True
    trigger_after: TriggerAfter = msgspec.field(default_factory=TriggerAfter)
    repeat_interval_seconds: Repeat | None = None
    disabled_until: AwareDatetime | None = None
    labels: Labels = msgspec.field(default_factory=dict)


class MonitorUpdate(RequestBody):
    """Partial update: absent fields are left alone; `null` clears an optional one. The result is checked
    as a whole, as at creation. `type` may be sent but not changed."""

    name: Name | UnsetType = UNSET
    type: MonitorType | UnsetType = UNSET
    apl: Apl | UnsetType = UNSET
    notifier_ids: NotifierIds | UnsetType = UNSET
    description: Description | UnsetType | None = UNSET
    operator: Operator | UnsetType | None = UNSET
    threshold: Finite | UnsetType | None = UNSET
    interval_seconds: Interval | UnsetType = UNSET
    range_seconds: Range | UnsetType = UNSET
    delay_seconds: Delay | UnsetType = UNSET
    alert_on_no_data: bool | UnsetType = UNSET
    notify_by_group: bool | UnsetType = UNSET
    resolvable: bool | UnsetType = UNSET
    trigger_after: TriggerAfter | UnsetType = UNSET
    repeat_interval_seconds: Repeat | UnsetType | None = UNSET
    disabled_until: AwareDatetime | UnsetType | None = UNSET
    labels: Labels | UnsetType = UNSET


class TriggerAfterOut(msgspec.Struct):
    m: int
    n: int


class MonitorOut(msgspec.Struct, kw_only=True):
    object: str = "monitor"
    id: str
    name: str
    description: str | None
    type: str
    apl: str
    dataset: str
    operator: str | None
    threshold: float | None
    interval_seconds: int
    range_seconds: int
    delay_seconds: int
    notifier_ids: list[str]
    labels: Labels
    alert_on_no_data: bool
    notify_by_group: bool
    resolvable: bool
    trigger_after: TriggerAfterOut
    repeat_interval_seconds: int | None
    disabled_until: str | None
    state: str
    alerting_groups: list[dict[str, Any]]  # with notify_by_group: the groups alerting now (at most 100)
    last_value: float | None
    last_error: str | None
    last_evaluated_at: str | None
    next_evaluation_at: str
    created_at: str
    updated_at: str


class MonitorSaved(MonitorOut, kw_only=True):
    """The answer of a create or an update: the monitor, and what its query names that its dataset has never
    had (`unknown_field`, with the closest known field), or that the dataset does not exist yet
    (`unknown_dataset`). Such a monitor is saved, but would see null where it expects a value."""

    warnings: Annotated[
        list[ResultWarning],
        msgspec.Meta(
            description="What would keep the monitor from ever seeing data: fields its query names that its "
            "dataset has never had (`unknown_field`, with the closest known field in `suggestion`), or a dataset "
            "that does not exist yet (`unknown_dataset`). The monitor is saved all the same."
        ),
    ] = msgspec.field(default_factory=list)


class MonitorEventOut(msgspec.Struct, kw_only=True):
    """One history entry. In a dry-run evaluation `id` is null and `deliveries` empty: nothing was written."""

    object: str = "monitor_event"
    id: str | None
    monitor_id: str
    kind: str
    state: str
    value: float | None
    threshold: float | None
    group: dict[str, Any]
    time: str
    start_time: str | None
    end_time: str | None
    match_count: int | None
    matches: list[dict[str, Any]]
    error: str | None
    deliveries: list[str]


class EvaluateRequest(RequestBody):
    dry_run: bool = False


class GroupOut(msgspec.Struct, kw_only=True):
    group: dict[str, Any]
    state: str
    value: float | None


class EvaluationOut(msgspec.Struct, kw_only=True):
    """What one evaluation found and did (or, with `dry_run`, would do)."""

    object: str = "monitor_evaluation"
    monitor_id: str
    dry_run: bool
    time: str
    start_time: str
    end_time: str
    previous_state: str
    state: str
    value: float | None
    error: str | None
    groups: list[GroupOut]
    match_count: int | None
    matches: list[dict[str, Any]]
    events: list[MonitorEventOut]
    notifier_ids: list[str]  # who got (or would get) the messages of `events` that notify

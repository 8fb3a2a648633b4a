from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from app.routing.schemas import Matchers
from app.schemas import AwareDatetime, RequestBody

Text256 = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Text2048 = Annotated[str, msgspec.Meta(max_length=2048)]
Url = Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
# Dataset names, or ["*"]: environment-wide (every chart; related to alerts by labels only).
Datasets = Annotated[list[str], msgspec.Meta(min_length=1, max_length=100)]
LabelMap = dict[str, str]


class SilenceSpec(RequestBody):
    """A rollout holds its own alerts: alerts matching `matchers` are silenced while the annotation's span lasts."""

    matchers: Matchers


class AnnotationCreate(RequestBody):
    type: Text256
    title: Text256
    datasets: Datasets
    time: AwareDatetime | None = None
    end_time: AwareDatetime | None = None
    url: Url | None = None
    description: Text2048 | None = None
    labels: LabelMap = msgspec.field(default_factory=dict)
    silence: SilenceSpec | None = None


class AnnotationUpdate(RequestBody):
    """Partial update: absent fields are left alone; `null` clears an optional one (`silence: null` ends the
    silence the annotation holds)."""

    type: Text256 | UnsetType = UNSET
    title: Text256 | UnsetType = UNSET
    datasets: Datasets | UnsetType = UNSET
    time: AwareDatetime | UnsetType = UNSET
    end_time: AwareDatetime | UnsetType | None = UNSET
    url: Url | UnsetType | None = UNSET
    description: Text2048 | UnsetType | None = UNSET
    labels: LabelMap | UnsetType = UNSET
    silence: SilenceSpec | UnsetType | None = UNSET


class AnnotationOut(msgspec.Struct, kw_only=True):
    object: str = "annotation"
    id: str
    type: str
    title: str
    description: str | None
    datasets: list[str]  # ["*"]: environment-wide
    time: str
    end_time: str | None
    url: str | None
    created_at: str
    labels: LabelMap
    origin: str  # api, monitor, grafana, honeycomb, pagerduty
    silence_id: str | None  # the silence it holds while its span lasts

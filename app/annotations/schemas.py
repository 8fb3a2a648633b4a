from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from app.schemas import AwareDatetime, RequestBody

Text256 = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Text2048 = Annotated[str, msgspec.Meta(max_length=2048)]
Url = Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
Datasets = Annotated[list[str], msgspec.Meta(min_length=1)]


class AnnotationCreate(RequestBody):
    type: Text256
    title: Text256
    datasets: Datasets
    time: AwareDatetime | None = None
    end_time: AwareDatetime | None = None
    url: Url | None = None
    description: Text2048 | None = None


class AnnotationUpdate(RequestBody):
    """Partial update: absent fields are left alone; `null` clears an optional one."""

    type: Text256 | UnsetType = UNSET
    title: Text256 | UnsetType = UNSET
    datasets: Datasets | UnsetType = UNSET
    time: AwareDatetime | UnsetType = UNSET
    end_time: AwareDatetime | UnsetType | None = UNSET
    url: Url | UnsetType | None = UNSET
    description: Text2048 | UnsetType | None = UNSET


class AnnotationOut(msgspec.Struct, kw_only=True):
    object: str = "annotation"
    id: str
    type: str
    title: str
    description: str | None
    datasets: list[str]
    time: str
    end_time: str | None
    url: str | None
    created_at: str

from __future__ import annotations

from typing import Annotated

import msgspec

from app.schemas import RequestBody


class DatasetOut(msgspec.Struct, kw_only=True):
    name: str
    created_at: str
    description: str | None
    retention_days: int | None
    object: str = "dataset"


class DatasetDetail(DatasetOut, kw_only=True):
    fields_count: int
    events_estimate: int
    min_time: str | None
    max_time: str | None


class FieldOut(msgspec.Struct, kw_only=True):
    name: str
    types: list[str]
    first_seen: str
    object: str = "field"


class DatasetPatch(RequestBody):
    # UNSET leaves a value alone; null clears it.
    description: Annotated[str, msgspec.Meta(max_length=2048)] | msgspec.UnsetType | None = msgspec.UNSET
    retention_days: Annotated[int, msgspec.Meta(ge=1, le=36500)] | msgspec.UnsetType | None = msgspec.UNSET

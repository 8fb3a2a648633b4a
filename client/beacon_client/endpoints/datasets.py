from __future__ import annotations

import msgspec
from msgspec import UnsetType

from beacon_client.call import Call, decode, json_call, no_content, query_string, segment
from beacon_client.models import Dataset, DatasetInfo, Field, Page


def list_datasets(*, limit: int | None = None, cursor: str | None = None) -> Call[Page[Dataset]]:
    return Call("GET", "/v1/datasets", decode(Page[Dataset]), params=query_string(limit=limit, cursor=cursor))


def get_dataset(name: str) -> Call[DatasetInfo]:
    return Call("GET", f"/v1/datasets/{segment(name)}", decode(DatasetInfo))


def list_fields(name: str, *, limit: int | None = None, cursor: str | None = None) -> Call[Page[Field]]:
    return Call(
        "GET",
        f"/v1/datasets/{segment(name)}/fields",
        decode(Page[Field]),
        params=query_string(limit=limit, cursor=cursor),
    )


def update_dataset(
    name: str,
    *,
    description: str | UnsetType | None = msgspec.UNSET,
    retention_days: int | UnsetType | None = msgspec.UNSET,
) -> Call[DatasetInfo]:
    """Change only the fields given (None clears one)."""
    return json_call(
        "PATCH",
        f"/v1/datasets/{segment(name)}",
        decode(DatasetInfo),
        description=description,
        retention_days=retention_days,
    )


def delete_dataset(name: str) -> Call[None]:
    """Delete a dataset and all its events."""
    return Call("DELETE", f"/v1/datasets/{segment(name)}", no_content)

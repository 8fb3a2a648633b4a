from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec import UnsetType

from beacon_client.call import Call, TimeArg, decode, json_call, names, no_content, query_string, segment
from beacon_client.models import Annotation, Page


def create_annotation(
    type: str,
    title: str,
    datasets: str | Sequence[str],
    *,
    time: TimeArg | None = None,
    end_time: TimeArg | None = None,
    url: str | None = None,
    description: str | None = None,
    labels: dict[str, str] | None = None,
) -> Call[Annotation]:
    """Mark a moment (or a span, with `end_time`) on the charts of `datasets` (one name or several; `"*"`: every
    chart); `time` defaults to now; `labels` tie it to the alerts that carry them (their messages tell of it)."""
    optional = {"time": time, "end_time": end_time, "url": url, "description": description, "labels": labels}
    return json_call(
        "POST",
        "/v1/annotations",
        decode(Annotation),
        type=type,
        title=title,
        datasets=names(datasets),
        **{k: v for k, v in optional.items() if v is not None},
    )


def list_annotations(
    *,
    datasets: str | Sequence[str] | None = None,
    start_time: TimeArg | None = None,
    end_time: TimeArg | None = None,
    type: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[Page[Annotation]]:
    """Annotations overlapping the range, newest first."""
    params = query_string(
        datasets=datasets, start_time=start_time, end_time=end_time, type=type, limit=limit, cursor=cursor
    )
    return Call("GET", "/v1/annotations", decode(Page[Annotation]), params=params)


def get_annotation(annotation_id: str) -> Call[Annotation]:
    return Call("GET", f"/v1/annotations/{segment(annotation_id)}", decode(Annotation))


def update_annotation(
    annotation_id: str,
    *,
    type: str | UnsetType = msgspec.UNSET,
    title: str | UnsetType = msgspec.UNSET,
    datasets: str | Sequence[str] | UnsetType = msgspec.UNSET,
    time: TimeArg | UnsetType = msgspec.UNSET,
    end_time: TimeArg | UnsetType | None = msgspec.UNSET,
    url: str | UnsetType | None = msgspec.UNSET,
    description: str | UnsetType | None = msgspec.UNSET,
    labels: dict[str, str] | UnsetType = msgspec.UNSET,
) -> Call[Annotation]:
    """Change only the fields given (None clears an optional one)."""
    return json_call(
        "PATCH",
        f"/v1/annotations/{segment(annotation_id)}",
        decode(Annotation),
        type=type,
        title=title,
        datasets=names(datasets) if not isinstance(datasets, UnsetType) else datasets,
        time=time,
        end_time=end_time,
        url=url,
        description=description,
        labels=labels,
    )


def delete_annotation(annotation_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/annotations/{segment(annotation_id)}", no_content)

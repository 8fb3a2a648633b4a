"""Honeycomb's markers API (`/1/markers/{dataset}`), so that `honeymarker` and the tools built on Honeycomb's API
mark releases in Beacon by changing one URL. Token: `X-Honeycomb-Team: <Beacon token>`, where Honeycomb's API
key goes (honeymarker's `-k`); `Authorization: Bearer` works too.

Mapping (docs/deploy-markers.md): the path's dataset is the one it is drawn on, `__all__` environment-wide;
`start_time`, `end_time` (unix seconds) the moment or span (a later `end_time` closes the span, and ends a
rollout's silence); `message` the title (first line) and description, kept whole; `type` the type (`marker` when
empty); `url` the link. What a client sends that the server assigns (`id`, `created_at`, `updated_at`, `color`;
honeymarker sends them zero-valued) is ignored, as Honeycomb does. A Honeycomb marker has no labels: it relates to
the alerts of its dataset (an environment-wide one to none until labels are given through `/v1/annotations`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from litestar import Request, Router, delete, get, post, put
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import annotation_filter, requires
from app.annotations import service
from app.auth import principal
from app.datasets.names import check_dataset_name
from app.db.annotation import Annotation
from app.deploymarkers.common import decode, from_unix, split_text, unix_s
from app.deploymarkers.errors import exception_handlers, honeycomb_shape
from app.errors import BeaconError
from app.timefmt import utcnow

READ = requires("annotations:read")
WRITE = requires("annotations:write")
ALL = "__all__"  # Honeycomb's name for the environment: its markers are on every dataset's charts
LISTED = 1_000  # newest markers a list answers with (Honeycomb's list has no pages)


class MarkerBody(msgspec.Struct):
    """A marker as a client sends it; zero values (Go's) read as absent."""

    start_time: int | None = None
    end_time: int | None = None
    message: str | None = None
    type: str | None = None
    url: str | None = None
    # Assigned by the server: accepted and ignored (honeymarker sends "" and Go's zero time).
    id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    color: str | None = None


def _rfc3339(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def view(a: Annotation) -> dict[str, Any]:
    fields = a.source_fields or {}
    message = fields.get("message")
    if not isinstance(message, str):
        message = a.title + (f"\n\n{a.description}" if a.description else "")
    shown: dict[str, Any] = {
        "id": a.id,
        "created_at": _rfc3339(a.created_at),
        "updated_at": _rfc3339(a.updated_at),
        "start_time": unix_s(a.time),
        "message": message,
        "type": a.type,
        "color": "",
    }
    if a.end_time is not None:
        shown["end_time"] = unix_s(a.end_time)
    if a.url:
        shown["url"] = a.url
    return shown


def _datasets(dataset: str) -> list[str]:
    return [] if dataset == ALL else [check_dataset_name(dataset)]


def _text(body: MarkerBody) -> tuple[str, str | None]:
    text = body.message or body.type or "marker"
    return split_text(text, "message")


def _placed(dataset: str) -> Any:
    """The annotations a path's dataset holds: its own (not the environment-wide ones), or those for `__all__`."""
    if dataset == ALL:
        return func.cardinality(Annotation.datasets) == 0
    return Annotation.datasets.contains([check_dataset_name(dataset)])


@post("/{dataset:str}", status_code=201, opt=WRITE)
async def create(request: Request[Any, Any, Any], db: AsyncSession, dataset: str) -> dict[str, Any]:
    who = principal(request)
    body = decode(await request.body(), MarkerBody)
    now = utcnow()
    start = from_unix(body.start_time, "start_time") if body.start_time else now
    end = from_unix(body.end_time, "end_time") if body.end_time else None
    title, description = _text(body)
    draft = service.Draft(
        type=(body.type or "marker")[:256],
        title=title,
        description=description,
        datasets=_datasets(dataset),
        time=start,
        end_time=end if end is not None and end > start else None,
        url=body.url or None,
        origin="honeycomb",
        source_fields={"message": body.message} if body.message else {},
    )
    annotation = service.add(db, who, draft, now)
    await db.commit()
    return view(annotation)


@get("/{dataset:str}", opt=READ)
async def list_markers(request: Request[Any, Any, Any], db: AsyncSession, dataset: str) -> list[dict[str, Any]]:
    stmt = (
        select(Annotation)
        .where(annotation_filter(principal(request)), _placed(dataset))
        .order_by(Annotation.time.desc(), Annotation.id.desc())
        .limit(LISTED)
    )
    return [view(a) for a in (await db.execute(stmt)).scalars()]


async def _marker(db: AsyncSession, request: Request[Any, Any, Any], dataset: str, marker_id: str) -> Annotation:
    stmt = select(Annotation).where(Annotation.id == marker_id, annotation_filter(principal(request)), _placed(dataset))
    found = (await db.execute(stmt.with_for_update())).scalar()
    if found is None:
        raise BeaconError("not_found", "marker not found")
    return found


@put("/{dataset:str}/{marker_id:str}", opt=WRITE)
async def update(request: Request[Any, Any, Any], db: AsyncSession, dataset: str, marker_id: str) -> dict[str, Any]:
    """The fields given (not zero) change: honeymarker's `update` sends only those it was told."""
    who = principal(request)
    body = decode(await request.body(), MarkerBody)
    found = await _marker(db, request, dataset, marker_id)
    changes: dict[str, Any] = {}
    start = from_unix(body.start_time, "start_time") if body.start_time else found.time
    if body.start_time:
        changes["time"] = start
    if body.end_time:
        end = from_unix(body.end_time, "end_time")
        if end < start:
            raise BeaconError("invalid_field", "`end_time` must not be before `start_time`.", param="end_time")
        changes["end_time"] = end if end > start else None
    if body.message:
        changes["title"], changes["description"] = split_text(body.message, "message")
        changes["source_fields"] = {**(found.source_fields or {}), "message": body.message}
    if body.type:
        changes["type"] = body.type[:256]
    if body.url:
        changes["url"] = body.url
    await service.change(db, who, found, changes, utcnow())
    await db.commit()
    return view(found)


@delete("/{dataset:str}/{marker_id:str}", status_code=200, opt=WRITE)
async def remove(request: Request[Any, Any, Any], db: AsyncSession, dataset: str, marker_id: str) -> dict[str, Any]:
    who = principal(request)
    found = await _marker(db, request, dataset, marker_id)
    shown = view(found)
    await service.remove(db, who, found, utcnow())
    await db.commit()
    return shown


def honeycomb_router() -> Router:
    """Mounted at /1/markers, outside the OpenAPI document (its contract is Honeycomb's)."""
    return Router(
        path="/1/markers",
        route_handlers=[create, list_markers, update, remove],
        exception_handlers=exception_handlers(honeycomb_shape),
        include_in_schema=False,
    )

"""Grafana's annotations API (`/api/annotations`), so that a deploy tool that marks releases in Grafana (Argo CD
notifications' `grafana` service, Flux's Grafana provider, the common GitHub Actions) marks them in Beacon by
changing one URL. Token: `Authorization: Bearer <Beacon token>`, as Grafana's service-account tokens are sent.

Mapping (docs/deploy-markers.md):
- `text`: the title (its first line) and the description; kept whole, so it reads back as posted.
- `tags`: each `key:value` tag whose key is a label name is a label (`service:checkout`); the first other tag is
  the type (`deploy`), `annotation` when there is none. The tags are kept as posted.
- `dashboardUID`: the dataset it is drawn on (a Beacon chart is a dataset's); none: environment-wide, as
  Grafana's organisation annotations are (a dataset-limited token's: its datasets).
- `time`, `timeEnd` (ms): the moment or span; `timeEnd` later closes a span (and ends a rollout's silence).
- `panelId`, `dashboardId`, `data`: kept, read back.
The integer `id` Grafana answers with is the annotation's `number`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec
from litestar import Request, Response, Router, delete, get, patch, post, put
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import annotation_filter, requires, unnamed_annotation_datasets
from app.annotations import service
from app.auth import principal
from app.datasets.names import is_dataset_name
from app.db.annotation import Annotation
from app.deploymarkers.common import bounded, decode, from_unix, split_text, unix_ms
from app.deploymarkers.errors import exception_handlers, grafana_shape
from app.errors import BeaconError
from app.routing.labels import MAX_LABELS, MAX_VALUE_CHARS, is_label_name
from app.timefmt import utcnow

READ = requires("annotations:read")
WRITE = requires("annotations:write")
DEFAULT_LIMIT = 100
MAX_LIMIT = 5_000
SCAN_ROWS = 20_000  # rows read at most to match `tags`


class PostBody(msgspec.Struct):
    """POST /api/annotations (and PUT, PATCH: every field optional; null reads as absent, as in Go)."""

    time: int | None = None
    timeEnd: int | None = None  # Grafana's names
    tags: list[str] | None = None
    text: str | None = None
    dashboardUID: str | None = None
    dashboardId: int | None = None
    panelId: int | None = None
    data: dict[str, Any] | None = None


class GraphiteBody(msgspec.Struct):
    what: str | None = None
    tags: list[str] | str | None = None  # also Graphite's older form: one string, tags separated by spaces
    when: int | None = None  # seconds
    data: str | None = None


def tags_to(tags: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The type and the labels that tags say: `key:value` tags are labels, the first other tag is the type."""
    labels: dict[str, str] = {}
    kind = None
    for tag in tags:
        key, sep, value = tag.partition(":")
        if sep and is_label_name(key) and value and len(value) <= MAX_VALUE_CHARS and key not in labels:
            labels[key] = value
        elif kind is None and tag.strip():
            kind = tag.strip()[:256]
    if len(labels) > MAX_LABELS:
        raise BeaconError("invalid_field", f"At most {MAX_LABELS} `key:value` tags (labels).", param="tags")
    return kind or "annotation", dict(sorted(labels.items()))


def view(a: Annotation) -> dict[str, Any]:
    """An annotation as Grafana's API shows one: what a tool posted comes back as it was posted."""
    fields = a.source_fields or {}
    tags = fields.get("tags")
    if not isinstance(tags, list):
        tags = [a.type, *(f"{k}:{v}" for k, v in sorted((a.labels or {}).items()))]
    text = fields.get("text")
    if not isinstance(text, str):
        text = a.title + (f"\n\n{a.description}" if a.description else "")
    uid = fields.get("dashboardUID")
    if not isinstance(uid, str):
        uid = a.datasets[0] if len(a.datasets) == 1 else ""
    start = unix_ms(a.time)
    return {
        "id": a.number,
        "alertId": 0,
        "alertName": "",
        "dashboardId": int(fields.get("dashboardId") or 0),
        "dashboardUID": uid,
        "panelId": int(fields.get("panelId") or 0),
        "userId": 0,
        "newState": "",
        "prevState": "",
        "created": unix_ms(a.created_at),
        "updated": unix_ms(a.updated_at),
        "time": start,
        "timeEnd": unix_ms(a.end_time) if a.end_time is not None else start,
        "text": text,
        "tags": tags,
        "login": "",
        "email": "",
        "avatarUrl": "",
        "data": fields.get("data") or {},
    }


def _span(time: int | None, time_end: int | None, now: datetime) -> tuple[datetime, datetime | None]:
    start = from_unix(time, "time", per_second=1000) if time else now
    end = from_unix(time_end, "timeEnd", per_second=1000) if time_end else None
    if end is not None and end < start:
        raise BeaconError("invalid_field", "`timeEnd` must not be before `time`.", param="timeEnd")
    return start, end if end is not None and end > start else None


def _text(text: str | None, what: str = "text") -> tuple[str, str | None]:
    if not text:
        raise BeaconError("invalid_field", f"Failed to save annotation: {what} field should not be empty.", param=what)
    return split_text(text, what)


def _dataset(uid: str | None) -> list[str] | None:
    if not uid:
        return None
    if not is_dataset_name(uid):
        raise BeaconError(
            "invalid_field",
            f"`dashboardUID` {uid!r} is not a dataset name: in Beacon it names the dataset to draw the annotation on.",
            param="dashboardUID",
        )
    return [uid]


def _ok(content: dict[str, Any]) -> Response[dict[str, Any]]:
    return Response(content=content, status_code=200)


@post("/", status_code=200, opt=WRITE)
async def add(request: Request[Any, Any, Any], db: AsyncSession) -> Response[dict[str, Any]]:
    who = principal(request)
    body = decode(await request.body(), PostBody)
    now = utcnow()
    title, description = _text(body.text)
    time, end_time = _span(body.time, body.timeEnd, now)
    tags = list(body.tags or [])
    kind, labels = tags_to(tags)
    fields: dict[str, Any] = {"text": body.text, "tags": tags}
    for name in ("dashboardUID", "dashboardId", "panelId"):
        if getattr(body, name):
            fields[name] = getattr(body, name)
    if body.data:
        fields["data"] = bounded(body.data, "data")
    draft = service.Draft(
        type=kind,
        title=title,
        description=description,
        datasets=_dataset(body.dashboardUID) or unnamed_annotation_datasets(who),
        time=time,
        end_time=end_time,
        labels=labels,
        origin="grafana",
        source_fields=fields,
    )
    annotation = service.add(db, who, draft, now)
    await db.flush()
    number = annotation.number
    await db.commit()
    return _ok({"message": "Annotation added", "id": number})


@post("/graphite", status_code=200, opt=WRITE)
async def add_graphite(request: Request[Any, Any, Any], db: AsyncSession) -> Response[dict[str, Any]]:
    """Graphite's event format: `what` (and `data`) the text, `when` in seconds, `tags` a list or one string."""
    who = principal(request)
    body = decode(await request.body(), GraphiteBody)
    if not body.what:
        raise BeaconError("invalid_field", "Failed to save Graphite annotation: what field should not be empty.")
    text = body.what + (f"\n{body.data}" if body.data else "")
    tags = body.tags.split(" ") if isinstance(body.tags, str) else list(body.tags or [])
    tags = [t for t in tags if t]
    now = utcnow()
    kind, labels = tags_to(tags)
    title, description = split_text(text, "what")
    draft = service.Draft(
        type=kind,
        title=title,
        description=description,
        datasets=unnamed_annotation_datasets(who),
        time=from_unix(body.when, "when") if body.when else now,
        labels=labels,
        origin="grafana",
        source_fields={"text": text, "tags": tags},
    )
    annotation = service.add(db, who, draft, now)
    await db.flush()
    number = annotation.number
    await db.commit()
    return _ok({"message": "Graphite annotation added", "id": number})


def _number(annotation_id: str) -> int:
    try:
        return int(annotation_id)
    except ValueError:
        raise BeaconError("invalid_parameter", "annotationId is invalid", param="annotationId") from None


@get("/{annotation_id:str}", opt=READ)
async def one(request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str) -> Response[dict[str, Any]]:
    found = await service.get_by_number(db, principal(request), _number(annotation_id))
    return _ok(view(found))


async def _update(request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str, *, whole: bool) -> None:
    """PATCH (`whole=False`): what is given and not zero changes, as Grafana's PatchAnnotation does (`tags: []`
    clears them). PUT: the text, tags and times are replaced (a zero time keeps the one there)."""
    who = principal(request)
    body = decode(await request.body(), PostBody)
    found = await service.get_by_number(db, who, _number(annotation_id), for_update=True)
    now = utcnow()
    fields = dict(found.source_fields or {})
    current = view(found)
    changes: dict[str, Any] = {}
    tags = body.tags if body.tags is not None else ([] if whole else None)
    if tags is not None:
        changes["type"], changes["labels"] = tags_to(tags)
        fields["tags"] = list(tags)
    if body.text:
        changes["title"], changes["description"] = split_text(body.text, "text")
        fields["text"] = body.text
    start = from_unix(body.time, "time", per_second=1000) if body.time else found.time
    if body.time:
        changes["time"] = start
    if body.timeEnd:
        end = from_unix(body.timeEnd, "timeEnd", per_second=1000)
        if end < start:
            raise BeaconError("invalid_field", "`timeEnd` must not be before `time`.", param="timeEnd")
        changes["end_time"] = end if end > start else None
    elif whole and current["timeEnd"] == current["time"]:
        changes["end_time"] = None
    if body.data is not None:
        fields["data"] = bounded(body.data, "data")
    changes["source_fields"] = fields
    await service.change(db, who, found, changes, now)
    await db.commit()


@patch("/{annotation_id:str}", opt=WRITE)
async def patch_one(request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str) -> Response[dict[str, Any]]:
    await _update(request, db, annotation_id, whole=False)
    return _ok({"message": "Annotation patched"})


@put("/{annotation_id:str}", opt=WRITE)
async def put_one(request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str) -> Response[dict[str, Any]]:
    await _update(request, db, annotation_id, whole=True)
    return _ok({"message": "Annotation updated"})


@delete("/{annotation_id:str}", status_code=200, opt=WRITE)
async def remove(request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str) -> Response[dict[str, Any]]:
    who = principal(request)
    found = await service.get_by_number(db, who, _number(annotation_id), for_update=True)
    await service.remove(db, who, found, utcnow())
    await db.commit()
    return _ok({"message": "Annotation deleted"})


@get("/", opt=READ)
async def find(request: Request[Any, Any, Any], db: AsyncSession) -> Response[list[dict[str, Any]]]:
    """Annotations overlapping `from`..`to` (ms), newest first, at most `limit` (100; up to 5,000), having every
    tag of `tags` (any with `matchAny=true`), of `dashboardUID`'s dataset, `panelId`, `dashboardId`; `type=alert`
    finds none (Beacon's alerts are not annotations)."""
    who = principal(request)
    q = request.query_params
    limit = _int(q.get("limit"), "limit") or DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise BeaconError("invalid_parameter", f"`limit` must be between 1 and {MAX_LIMIT}.", param="limit")
    if q.get("type") == "alert" or _int(q.get("alertId"), "alertId"):
        return Response(content=[], status_code=200)
    stmt = select(Annotation).where(annotation_filter(who))
    if start := _int(q.get("from"), "from"):  # overlapping: a span that ends after `from` counts
        stmt = stmt.where(
            func.coalesce(Annotation.end_time, Annotation.time) >= from_unix(start, "from", per_second=1000)
        )
    if end := _int(q.get("to"), "to"):
        stmt = stmt.where(Annotation.time <= from_unix(end, "to", per_second=1000))
    if uid := q.get("dashboardUID"):
        stmt = stmt.where(Annotation.datasets.contains([uid]))
    for name in ("panelId", "dashboardId"):
        if value := _int(q.get(name), name):
            stmt = stmt.where(Annotation.source_fields[name].as_integer() == value)
    wanted = [t for t in q.getall("tags", []) if t]
    match_any = q.get("matchAny", "").lower() == "true"
    # Tags are matched as Grafana shows them (as posted, or made of type and labels): read newest first, at most
    # SCAN_ROWS rows, until `limit` match.
    stmt = stmt.order_by(Annotation.time.desc(), Annotation.id.desc()).limit(limit if not wanted else SCAN_ROWS)
    found: list[dict[str, Any]] = []
    for a in (await db.execute(stmt)).scalars():
        shown = view(a)
        if wanted and not (any if match_any else all)(t in shown["tags"] for t in wanted):
            continue
        found.append(shown)
        if len(found) == limit:
            break
    return Response(content=found, status_code=200)


def _int(text: str | None, param: str) -> int:
    if not text:
        return 0
    try:
        return int(text)
    except ValueError:
        raise BeaconError("invalid_parameter", f"`{param}` must be an integer.", param=param) from None


def grafana_router() -> Router:
    """Mounted at /api/annotations, outside the OpenAPI document (its contract is Grafana's)."""
    return Router(
        path="/api/annotations",
        route_handlers=[add, add_graphite, find, one, patch_one, put_one, remove],
        exception_handlers=exception_handlers(grafana_shape),
        include_in_schema=False,
    )

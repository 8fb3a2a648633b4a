"""PagerDuty's change events (`POST /v2/change/enqueue`), so that a pipeline that tells PagerDuty of its changes
(PagerDuty's own clients, its CI integrations) tells Beacon by changing one URL.

`routing_key` is a Beacon API token with `annotations:write`, sent where PagerDuty's integration key goes (Events
API v2 has no header for it). Where the change goes: a dataset-limited token's datasets; an unlimited token's
change is environment-wide and relates to alerts by its labels. Mapping (docs/deploy-markers.md): `summary` the
title (first line) and description, type `change`; `timestamp` the time (now when absent); the first http(s)
`links[].href` the link; each `custom_details` entry whose key is a label name and whose value is a string is a
label (`service`, `env`, `version`), the rest is kept; `source` is kept. Answered as PagerDuty does: 202
`{"status": "success", "message": "Change event processed"}`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from litestar import Request, Response, Router, post
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.checks import http_url_problem
from app.access import requires, unnamed_annotation_datasets
from app.annotations import service
from app.auth import principal
from app.deploymarkers.common import bounded, decode, split_text
from app.deploymarkers.errors import exception_handlers, pagerduty_shape
from app.errors import BeaconError
from app.routing.labels import MAX_LABELS, MAX_VALUE_CHARS, is_label_name
from app.schemas import TIME_RANGE, in_time_range
from app.timefmt import utcnow

PATH = "/v2/change/enqueue"
SUMMARY_CHARS = 1024  # PagerDuty's limit


class Link(msgspec.Struct):
    href: str | None = None
    text: str | None = None


class Payload(msgspec.Struct):
    summary: str | None = None
    source: str | None = None
    timestamp: str | None = None
    custom_details: dict[str, Any] | None = None


class ChangeEvent(msgspec.Struct):
    routing_key: str | None = None  # the token: read by app/auth.py before the handler runs
    payload: Payload | None = None
    links: list[Link] | None = None
    images: list[Any] | None = None


def _time(text: str | None, now: datetime) -> datetime:
    if not text:
        return now
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        found = None
    if found is None or found.tzinfo is None or not in_time_range(found):
        raise BeaconError(
            "invalid_field", f"'payload.timestamp' must be an ISO 8601 time with an offset, {TIME_RANGE}."
        )
    return found


def _labels(details: dict[str, Any]) -> dict[str, str]:
    labels = {
        k: v for k, v in details.items() if is_label_name(k) and isinstance(v, str) and 0 < len(v) <= MAX_VALUE_CHARS
    }
    return dict(sorted(labels.items())[:MAX_LABELS])


@post(PATH, status_code=202, opt=requires("annotations:write"))
async def enqueue(request: Request[Any, Any, Any], db: AsyncSession) -> Response[dict[str, str]]:
    who = principal(request)
    event = decode(await request.body(), ChangeEvent)
    payload = event.payload
    if payload is None or not payload.summary:
        raise BeaconError("missing_field", "'payload.summary' is missing or blank")
    if len(payload.summary) > SUMMARY_CHARS:
        raise BeaconError("invalid_field", f"'payload.summary' is over {SUMMARY_CHARS} characters")
    now = utcnow()
    details = bounded(payload.custom_details or {}, "payload.custom_details")
    url = next((link.href for link in event.links or () if link.href and not http_url_problem(link.href)), None)
    title, description = split_text(payload.summary, "payload.summary")
    fields: dict[str, Any] = {"summary": payload.summary}
    if payload.source:
        fields["source"] = payload.source[:1024]
    if details:
        fields["custom_details"] = details
    if event.links:
        fields["links"] = bounded([msgspec.to_builtins(link) for link in event.links], "links")
    draft = service.Draft(
        type="change",
        title=title,
        description=description,
        datasets=unnamed_annotation_datasets(who),
        time=_time(payload.timestamp, now),
        url=url if url and len(url) <= 2048 else None,
        labels=_labels(details),
        origin="pagerduty",
        source_fields=fields,
    )
    service.add(db, who, draft, now)
    await db.commit()
    return Response(content={"status": "success", "message": "Change event processed"}, status_code=202)


def pagerduty_router() -> Router:
    """Mounted at the root, outside the OpenAPI document (its contract is PagerDuty's)."""
    return Router(
        path="/",
        route_handlers=[enqueue],
        exception_handlers=exception_handlers(pagerduty_shape),
        include_in_schema=False,
    )

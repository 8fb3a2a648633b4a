"""`POST /v1/loki/api/v1/push`: Loki's push API, JSON (optionally gzip) or snappy-compressed protobuf."""

from __future__ import annotations

import functools
import sys
from typing import Any

from litestar import Request, Response, post
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import may_use_dataset, requires
from app.auth import principal
from app.errors import BeaconError
from app.ingest.batches import EventOptions
from app.services import Services
from app.shippers import openapi
from app.shippers.common import header_dataset, limits_for, read_whole_body, store
from app.shippers.loki import push
from app.shippers.loki.answers import pushed
from app.timefmt import utcnow

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_TEXT = {"text/plain": openapi.TEXT}
_OPERATION = openapi.operation_class(
    body=(
        "A push: JSON `{streams: [{stream: {labels}, values: [[ns, line, {metadata}?]]}]}` (optionally gzip), or a "
        "snappy-compressed protobuf `logproto.PushRequest`. At most 10 MB as sent, 32 MB decompressed, 100,000 "
        "entries.",
        {_JSON: openapi.OBJECT, _PROTOBUF: openapi.BINARY},
    ),
    responses={
        204: ("Every entry was stored.", {}),
        **openapi.errors(
            "Plain text. A 400 after a push that was read names the entries that were not stored; the others were.",
            _TEXT,
            (*openapi.EVERY_ROUTE, *openapi.BODY),
        ),
    },
)


@post(
    "/v1/loki/api/v1/push",
    status_code=200,  # the answer says: 204 (all stored) or 400 (some not)
    opt=requires("ingest"),
    tags=["shippers"],
    request_max_body_size=sys.maxsize,  # the caps are ingest's own (app/ingest/bodies.py)
    operation_class=_OPERATION,
    summary="Loki push API",
    operation_id="pushLokiLogs",
)
async def loki_push(request: Request[Any, Any, Any], db: AsyncSession, services: Services) -> Response[bytes]:
    """Push log lines as Grafana Loki's API takes them (Promtail, Grafana Alloy, the Loki Docker driver, winston-
    loki): each stream's labels become fields; the dataset is the `dataset` label, else `loki`. Needs `ingest`."""
    media = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media not in (_JSON, _PROTOBUF):
        shown = f"`{media}`" if media else "no Content-Type"
        raise BeaconError(
            "unsupported_media_type", f"A Loki push is `application/json` or `application/x-protobuf`, not {shown}."
        )
    pinned = header_dataset(request)
    limits = limits_for(services.settings)
    body = await read_whole_body(request, limits)
    arrival = utcnow()
    if media == _PROTOBUF:
        decoded = push.from_protobuf(push.uncompress(body, limits.max_decompressed_bytes))
    else:
        decoded = push.from_json(body)
    stored = await store(
        services,
        db,
        decoded.runs(pinned=pinned, may_use=functools.partial(may_use_dataset, principal(request))),
        limits=limits,
        options=EventOptions(timestamp_field="_time", arrival=arrival),
    )
    services.metrics.events_failed.inc(decoded.rejected)
    errors = list(decoded.errors)
    for name, result in stored.datasets.items():
        errors += [f"dataset {name}, entry {f.index}: {f.error}" for f in result.failures]
    return pushed(decoded.rejected + stored.failed, errors[: push.MAX_ERRORS])

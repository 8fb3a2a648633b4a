"""`_bulk` at `/v1/elastic/_bulk` and `/v1/elastic/{index}/_bulk` (POST, and PUT as Elastic's clients send it)."""

from __future__ import annotations

import functools
import sys
import time
from typing import Any

from litestar import Request, Response, route
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import may_use_dataset, requires
from app.auth import principal
from app.ingest.batches import EventOptions
from app.services import Services
from app.shippers import openapi
from app.shippers.common import arrival_warnings, header_dataset, limits_for, read_whole_body, store
from app.shippers.elastic.answers import ElasticError, answer
from app.shippers.elastic.bulk import parse
from app.timefmt import utcnow

TIMESTAMP_FIELD = "@timestamp"
_BULK_TYPES = {
    "application/x-ndjson",
    "application/json",
    "application/vnd.elasticsearch+x-ndjson",
    "application/vnd.elasticsearch+json",
}
_NDJSON = {"application/x-ndjson": openapi.TEXT}
_JSON = {"application/json": openapi.OBJECT}
_BULK_ERRORS = "Elasticsearch's error shape: `{error: {root_cause, type, reason}, status}`."
BULK_OPERATION = openapi.operation_class(
    body=(
        "Action lines (`index` or `create`) each followed by its document, NDJSON, optionally gzip. At most 10 MB as "
        "sent, 32 MB decompressed, 100,000 actions, 1 MB per document.",
        _NDJSON,
    ),
    responses={
        200: ("`{took, errors, items}`: one result per action, in order, with its own `status` and `error`.", _JSON),
        **openapi.errors(_BULK_ERRORS, _JSON, (*openapi.EVERY_ROUTE, *openapi.BODY)),
    },
)
# With the index in the path: 404 for a path that cannot name one (it holds a NUL).
INDEX_BULK_OPERATION = openapi.operation_class(
    body=("As `/v1/elastic/_bulk`; actions without `_index` go to the path's index.", _NDJSON),
    responses={
        200: ("`{took, errors, items}`: one result per action, in order, with its own `status` and `error`.", _JSON),
        **openapi.errors(_BULK_ERRORS, _JSON, (*openapi.EVERY_ROUTE, *openapi.BODY, 404)),
    },
)


def _check_type(request: Request[Any, Any, Any]) -> None:
    media = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media not in _BULK_TYPES:
        shown = f"[{media}]" if media else "[]"
        raise ElasticError(
            "unsupported_media_type",
            f"Content-Type header {shown} is not supported; the bulk API takes application/x-ndjson",
            es_type="media_type_header_exception",
        )


async def _bulk(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, path_index: str | None
) -> Response[bytes]:
    _check_type(request)
    pinned = header_dataset(request)
    limits = limits_for(services.settings)
    body = await read_whole_body(request, limits)
    started = time.monotonic()
    arrival = utcnow()
    if not body.strip():
        raise ElasticError("invalid_body", "request body is required", es_type="parse_exception")
    bulk = parse(
        body,
        path_index=path_index,
        pinned=pinned,
        may_use=functools.partial(may_use_dataset, principal(request)),
        max_items=limits.max_request_events,
    )
    if not bulk.items:
        raise ElasticError(
            "invalid_body", "Validation Failed: 1: no requests added;", es_type="action_request_validation_exception"
        )
    stored = await store(
        services,
        db,
        bulk.runs,
        limits=limits,
        options=EventOptions(timestamp_field=TIMESTAMP_FIELD, arrival=arrival, failures_shown=max(bulk.documents, 1)),
        rejected=len(bulk.items) - bulk.documents,
    )
    bulk.settle(stored.datasets)
    response = answer(request, bulk.answer(round((time.monotonic() - started) * 1000)))
    # Elasticsearch's warnings travel in `Warning` headers (its clients log or raise them): 299 is "persistent".
    warnings = arrival_warnings(stored, "`@timestamp`")
    if warnings:
        response.headers["Warning"] = ", ".join('299 Beacon "' + w.replace('"', '\\"') + '"' for w in warnings)
    return response


_BULK: dict[str, Any] = {
    "http_method": ["POST", "PUT"],
    "status_code": 200,
    "opt": requires("ingest"),
    "tags": ["shippers"],
    "request_max_body_size": sys.maxsize,  # the caps are ingest's own (app/ingest/bodies.py)
}


@route("/v1/elastic/_bulk", summary="Elasticsearch bulk API", operation_class=BULK_OPERATION, **_BULK)
async def bulk(request: Request[Any, Any, Any], db: AsyncSession, services: Services) -> Response[bytes]:
    """Index documents as Elasticsearch's `_bulk` API takes them, for Beats, Logstash, Vector, Fluent Bit and
    Elastic's clients: each action's `_index` is a Beacon dataset. Answers in Elasticsearch's shape. Needs
    `ingest`."""
    return await _bulk(request, db, services, None)


@route(
    "/v1/elastic/{index:str}/_bulk",
    summary="Elasticsearch bulk API, with a default index",
    operation_class=INDEX_BULK_OPERATION,
    **_BULK,
)
async def index_bulk(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, index: str
) -> Response[bytes]:
    """Elasticsearch's `_bulk` API with a default index (dataset) in the path. Needs `ingest`."""
    return await _bulk(request, db, services, index)

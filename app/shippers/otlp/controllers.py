"""`POST /v1/logs`: OTLP/HTTP logs, protobuf or JSON, gzip or not; the dataset from `X-Beacon-Dataset`."""

from __future__ import annotations

import sys
from typing import Any

from litestar import Request, Response, post
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import require_dataset, requires
from app.auth import principal
from app.ingest.batches import EventOptions
from app.services import Services
from app.shippers import openapi
from app.shippers.common import arrival_warnings, header_dataset, limits_for, read_whole_body, store
from app.shippers.otlp import protobuf
from app.shippers.otlp.answers import JSON, PROTOBUF, accepted, encoding_of
from app.shippers.otlp.jsonformat import JsonLogs
from app.timefmt import utcnow

DEFAULT_DATASET = "otel-logs"

_MESSAGES = {PROTOBUF: openapi.BINARY, JSON: openapi.OBJECT}
_OPERATION = openapi.operation_class(
    body=(
        "An `ExportLogsServiceRequest`, protobuf or OTLP/JSON, optionally gzip (`Content-Encoding: gzip`). At most "
        "10 MB as sent, 32 MB decompressed, 100,000 log records, 1 MB per record as an event.",
        _MESSAGES,
    ),
    responses={
        200: ("An `ExportLogsServiceResponse` (with `partial_success` when records were rejected).", _MESSAGES),
        **openapi.errors(
            "A `google.rpc.Status` in the request's encoding. 429 and 503 carry `Retry-After` and are worth retrying.",
            _MESSAGES,
            (*openapi.EVERY_ROUTE, *openapi.BODY),
        ),
    },
)


@post(
    "/v1/logs",
    status_code=200,
    opt=requires("ingest"),
    tags=["shippers"],
    request_max_body_size=sys.maxsize,  # the caps are ingest's own (app/ingest/bodies.py)
    operation_class=_OPERATION,
    summary="OTLP/HTTP logs (protobuf or JSON)",
    operation_id="exportOtlpLogs",  # OTLP's own name: LogsService.Export
)
async def otlp_logs(request: Request[Any, Any, Any], db: AsyncSession, services: Services) -> Response[bytes]:
    """Export logs as OpenTelemetry's OTLP/HTTP takes them (collectors and SDKs): each log record becomes an event in
    the dataset its resource names (`beacon.dataset`, else `otel-logs`). Needs `ingest`."""
    encoding = encoding_of(request.headers.get("content-type"))
    dataset = header_dataset(request) or DEFAULT_DATASET
    require_dataset(principal(request), dataset)
    limits = limits_for(services.settings)
    body = await read_whole_body(request, limits)
    arrival = utcnow()
    decoded = protobuf.decode(body) if encoding == PROTOBUF else JsonLogs(body)
    stored = await store(
        services,
        db,
        decoded.runs(dataset),
        limits=limits,
        options=EventOptions(timestamp_field="_time", arrival=arrival),
    )
    # Counted once the generator has run: records rejected by the decoder are found as it goes.
    services.metrics.events_failed.inc(decoded.rejected)
    rejected, errors = decoded.rejected, list(decoded.errors)
    result = stored.datasets.get(dataset)
    if result is not None:
        rejected += result.failed
        errors += [f.error for f in result.failures]
    # OTLP's partial success carries warnings too, with no record rejected.
    warnings = arrival_warnings(stored, "a time (`time_unix_nano` or `observed_time_unix_nano`)")
    return accepted(encoding, rejected, errors[: protobuf.MAX_ERRORS], warnings)

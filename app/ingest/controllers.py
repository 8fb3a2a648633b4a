from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Request, post
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import require_dataset, requires
from app.auth import principal
from app.datasets.names import check_dataset_name
from app.errors import BeaconError
from app.ingest import service
from app.ingest.bodies import BodyReader, body_format, check_declared_length, is_gzip, receive_body
from app.ingest.limits import IngestLimits
from app.ingest.schemas import IngestResult
from app.ingest.timestamps import make_reader
from app.services import Services
from app.settings import asyncpg_dsn
from app.timefmt import utcnow

TimestampField = Annotated[
    str | None, QueryParameter(name="timestamp-field", description="Field holding the event time (default `_time`).")
]
TimestampFormat = Annotated[
    str | None,
    QueryParameter(
        name="timestamp-format",
        description="Go reference-time layout of the timestamp (e.g. `02/Jan/2006:15:04:05 -0700`) or a Go layout "
        "name (RFC3339, RFC1123Z, ANSIC, …).",
    ),
]


@dataclass
class IngestOperation(Operation):
    """The OpenAPI operation, with the body described by hand: the handler reads the raw stream itself."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            description="Events: a JSON array of objects (at most 10,000), or NDJSON (one object per line, at "
            "most 100,000 lines); optionally gzip (`Content-Encoding: gzip`). At most 10 MB as sent, 100 MB "
            "decompressed, 1 MB per event, events of at most 100 different days (UTC).",
            content={
                "application/json": OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.ARRAY, items=Schema(type=OpenAPIType.OBJECT), max_items=10_000)
                ),
                "application/x-ndjson": OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING)),
            },
        )


@post(
    "/v1/ingest/{dataset:str}",
    status_code=200,
    opt=requires("ingest"),
    tags=["ingest"],
    # The size caps are ours (bodies.py), so that the 413 message states the body's size and the limit.
    request_max_body_size=sys.maxsize,
    operation_class=IngestOperation,
    summary="Ingest events (JSON array or NDJSON, optionally gzip)",
    operation_id="ingestEvents",
)
async def ingest(
    request: Request[Any, Any, Any],
    dataset: str,
    db: AsyncSession,
    services: Services,
    timestamp_field: TimestampField = None,
    timestamp_format: TimestampFormat = None,
) -> IngestResult:
    """Send events to a dataset (created on the first write): a JSON array of objects or NDJSON, optionally gzip.
    Each event's time is its timestamp field's value (or its arrival); nested objects flatten to dot paths. The
    accepted events are committed before the 200, which counts them and the ones that failed. Needs `ingest`."""
    check_dataset_name(dataset)
    require_dataset(principal(request), dataset)
    fmt = body_format(request.headers.get("content-type"))
    gzip = is_gzip(request.headers.get("content-encoding"))
    limits = IngestLimits(max_decompressed_bytes=services.settings.ingest_max_decompressed_bytes)
    check_declared_length(request.headers.get("content-length"), limits)
    if timestamp_field == "":
        raise BeaconError("invalid_parameter", "`timestamp-field` must not be empty.", param="timestamp-field")
    arrival = utcnow()
    try:
        read_time = make_reader(timestamp_format, arrival)
    except ValueError as exc:
        raise BeaconError("invalid_parameter", str(exc), param="timestamp-format") from None
    req = service.IngestRequest(
        dataset=dataset,
        fmt=fmt,
        gzip=gzip,
        timestamp_field=timestamp_field or "_time",
        read_time=read_time,
        arrival=arrival,
    )
    # The whole body first, then the transaction: no database connection waits on a client (request_bodies.py).
    body = BodyReader(await receive_body(request.stream(), limits), gzip=gzip, limits=limits)
    result = await service.ingest(
        db,
        req,
        body,
        limits=limits,
        caches=services.ingest_caches,
        dsn=asyncpg_dsn(services.settings.database_url or ""),
    )
    services.metrics.events_ingested.inc(result.ingested)
    services.metrics.events_failed.inc(result.failed)
    return result

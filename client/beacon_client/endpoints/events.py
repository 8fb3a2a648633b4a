"""Ingest, query and export."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from beacon_client.call import Call, TimeArg, decode, gzip_ndjson, json_call, no_content, query_string, segment
from beacon_client.models import IngestResult, QueryResult


def ingest_raw(
    dataset: str,
    body: bytes,
    *,
    content_type: str = "application/x-ndjson",
    content_encoding: str | None = "gzip",
    timestamp_field: str | None = None,
    timestamp_format: str | None = None,
) -> Call[IngestResult]:
    """Send an already encoded body: NDJSON or a JSON array, gzip-compressed or not."""
    headers = {"Content-Type": content_type}
    if content_encoding:
        headers["Content-Encoding"] = content_encoding
    return Call(
        "POST",
        f"/v1/ingest/{segment(dataset)}",
        decode(IngestResult),
        params=query_string(**{"timestamp-field": timestamp_field, "timestamp-format": timestamp_format}),
        content=body,
        headers=headers,
    )


def ingest(
    dataset: str,
    events: Iterable[Any],
    *,
    timestamp_field: str | None = None,
    timestamp_format: str | None = None,
) -> Call[IngestResult]:
    """Ingest events in one request (gzip NDJSON). Check `failed` in the result; for many events use `ingester`."""
    return ingest_raw(dataset, gzip_ndjson(events), timestamp_field=timestamp_field, timestamp_format=timestamp_format)


def query(
    apl: str, *, start_time: TimeArg | None = None, end_time: TimeArg | None = None, take: int | None = None
) -> Call[QueryResult]:
    """Run a query; the whole (capped) result comes back at once."""
    fields: dict[str, Any] = {"start_time": start_time, "end_time": end_time, "take": take}
    return json_call(
        "POST", "/v1/query", decode(QueryResult), apl=apl, **{k: v for k, v in fields.items() if v is not None}
    )


def export(apl: str, *, start_time: TimeArg | None = None, end_time: TimeArg | None = None) -> Call[None]:
    """The export request; the clients stream its NDJSON body row by row (see `export_row`)."""
    fields = {"start_time": start_time, "end_time": end_time}
    call = json_call("POST", "/v1/export", no_content, apl=apl, **{k: v for k, v in fields.items() if v is not None})
    return Call(
        call.method, call.path, call.parse, content=call.content, headers={**call.headers, "Accept-Encoding": "gzip"}
    )


export_row = msgspec.json.Decoder(dict[str, Any]).decode

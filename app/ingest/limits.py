"""The ingest limits of api.md, in one place."""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


def size_text(n: int) -> str:
    return f"{n // MB} MB" if n % MB == 0 else f"{n:,} bytes"


@dataclass(frozen=True)
class IngestLimits:
    max_body_bytes: int = 10 * MB  # as sent (compressed when gzip)
    max_decompressed_bytes: int = 100 * MB
    max_event_bytes: int = 1 * MB
    max_array_events: int = 10_000
    # NDJSON lines per request, blank ones included: what bounds a request's work when a small gzip body
    # inflates to millions of tiny lines (10 MB of plain NDJSON holds about 100,000 events of 100 bytes).
    max_ndjson_lines: int = 100_000
    # Bytes of one JSON-array element held while it is read: an element over `max_event_bytes` fails alone,
    # one still unfinished past this refuses the request (the array is parsed as it streams in).
    max_array_element_bytes: int = 10 * MB
    # Different UTC days (each a partition of `events`) one request may write to.
    max_days: int = 100
    # The shippers' protocols (app/shippers/): a body decoded whole (protobuf, a JSON document) is held in memory
    # with what is decoded from it, so its decompressed size has a cap of its own, below the streamed formats'.
    max_decoded_body_bytes: int = 32 * MB
    # Events one such request may hold, and datasets it may write to (each a lock, a row builder and the
    # upserts of its fields and counts in the request's transaction).
    max_request_events: int = 100_000
    max_request_datasets: int = 10
    # Rows per COPY statement: enough to amortise a round trip, small enough that NDJSON memory stays flat;
    # a chunk of large events is written once it holds this many bytes.
    chunk_rows: int = 5_000
    chunk_bytes: int = 4 * MB

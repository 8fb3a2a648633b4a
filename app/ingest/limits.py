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
    # Rows per COPY statement: enough to amortise a round trip, small enough that NDJSON memory stays flat.
    chunk_rows: int = 5_000

from __future__ import annotations

import msgspec

from app.ingest.rows import Failure


class IngestResult(msgspec.Struct, kw_only=True):
    dataset: str
    ingested: int
    failed: int
    failures: list[Failure]
    processed_bytes: int  # decompressed bytes read
    blocks_created: int  # COPY blocks (chunks of rows) written by this request
    object: str = "ingest_result"

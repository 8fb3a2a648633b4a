from __future__ import annotations

import msgspec

from app.ingest.rows import Failure
from app.result_warnings import ResultWarning


class IngestResult(msgspec.Struct, kw_only=True):
    dataset: str
    ingested: int
    failed: int
    failures: list[Failure]
    processed_bytes: int  # decompressed bytes read
    blocks_created: int  # COPY blocks (chunks of rows) written by this request
    # `time_from_arrival`: events without a timestamp were stamped with the arrival time although they carry
    # a field that looks like their time (`time`, `timestamp`, `@timestamp`, `ts`); `param` names the fix.
    warnings: list[ResultWarning] = msgspec.field(default_factory=list)
    object: str = "ingest_result"

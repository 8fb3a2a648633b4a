from __future__ import annotations

from typing import Annotated

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
    warnings: Annotated[
        list[ResultWarning],
        msgspec.Meta(
            description="`time_from_arrival`: events without the timestamp field were stamped with their arrival "
            "time although they carry a field that looks like their time (`@timestamp`, `timestamp`, `time`, "
            "`ts`); `field` names it and `param` the parameter to pass (`timestamp-field`)."
        ),
    ] = msgspec.field(default_factory=list)
    object: str = "ingest_result"

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from app.result_warnings import ResultWarning
from app.schemas import RequestBody

Apl = Annotated[str, msgspec.Meta(min_length=1, max_length=100_000)]


class QueryRequest(RequestBody):
    apl: Apl
    start_time: str | None = None  # RFC 3339 with an offset, or relative: `now-1h`
    end_time: str | None = None
    take: Annotated[int, msgspec.Meta(ge=1)] | None = None


class ExportRequest(RequestBody):
    apl: Apl
    start_time: str | None = None
    end_time: str | None = None


class ColumnOut(msgspec.Struct):
    name: str
    type: str


class QueryStatus(msgspec.Struct, kw_only=True):
    rows_examined: int | None  # null: PostgreSQL does not report it without a second pass
    rows_returned: int
    truncated: bool  # more rows matched than the row cap let through
    elapsed_ms: float
    min_time: str | None  # earliest and latest event time in the dataset within the queried range
    max_time: str | None


class QueryResult(msgspec.Struct, kw_only=True):
    object: str = "query_result"
    columns: list[ColumnOut]
    rows: list[tuple[Any, ...]]  # encoded as arrays
    status: QueryStatus
    warnings: Annotated[
        list[ResultWarning],
        msgspec.Meta(
            description="Fields the query names that no event of its dataset has ever had, so they read as null "
            "(`unknown_field`, with the closest known field in `suggestion`). Empty when the dataset records no "
            "fields (events written other than by ingest)."
        ),
    ] = msgspec.field(default_factory=list)

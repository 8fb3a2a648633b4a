"""What one query result may carry (`BEACON_QUERY_MAX_COLUMNS`, `BEACON_QUERY_MAX_CELLS`), said in its `warnings`; and
a big result built and encoded off the event loop (app/query/render.py builds it)."""

from __future__ import annotations

import asyncio

import asyncpg
import msgspec

from app.query.compiler import Layout
from app.query.render import Bounds, Table, bounded_table
from app.query.schemas import QueryResult
from app.result_warnings import ResultWarning
from app.settings import Settings

# Results at least this big (cells, or rows of whole events) are built and encoded on a worker thread: a few ms of
# work on the event loop is fine, 2,000 events of 50,000 fields held /healthz for 36 s.
OFF_LOOP_CELLS = 20_000
OFF_LOOP_EVENTS = 100


def result_bounds(settings: Settings) -> Bounds:
    return Bounds(max_columns=settings.query_max_columns, max_cells=settings.query_max_cells)


async def built_table(records: list[asyncpg.Record], layout: Layout, bounds: Bounds) -> Table:
    """The result's table, built on a worker thread when it is big (OFF_LOOP_*)."""
    big = len(records) >= OFF_LOOP_EVENTS if layout.raw else len(records) * len(layout.columns) >= OFF_LOOP_CELLS
    if big:
        return await asyncio.to_thread(bounded_table, records, layout, bounds)
    return bounded_table(records, layout, bounds)


def bound_warnings(table: Table, bounds: Bounds) -> list[ResultWarning]:
    """What `bounds` left out of a result, said in its `warnings`."""
    found = []
    if table.fields_left_out:
        found.append(
            ResultWarning(
                code="too_many_fields",
                message=f"The events hold {table.fields_left_out:,} more fields than fit in a result of "
                f"{bounds.max_columns:,} columns: the columns are the fields the most events have. `project` the "
                "fields you want.",
                param="apl",
            )
        )
    if table.rows_cut:
        found.append(
            ResultWarning(
                code="too_many_cells",
                message=f"The result stops at {len(table.rows):,} rows of {len(table.columns):,} columns "
                f"({bounds.max_cells:,} values at most); `project` fewer fields or `take` fewer rows.",
                param="apl",
            )
        )
    return found


async def encoded(result: QueryResult) -> bytes | None:
    """A big result as the JSON of the answer, encoded on a worker thread; None for a small one (the framework
    encodes it, on the event loop)."""
    if len(result.rows) * max(1, len(result.columns)) < OFF_LOOP_CELLS:
        return None
    return await asyncio.to_thread(msgspec.json.encode, result)

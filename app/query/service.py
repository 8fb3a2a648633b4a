"""POST /v1/query and /v1/export: parse, check access, compile, run on the query pool, render.

Statements run on the query pool's read-only sessions (app/db/reads.py), each under PostgreSQL's statement
timeout (PostgreSQL cancels one that runs over by itself): results are read as plain records (no ORM rows), and
export streams from a server-side cursor, one batch of rows at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from functools import lru_cache
from typing import Any

import asyncpg

from app.access import may_use_dataset, require_dataset
from app.auth import Principal
from app.datasets.names import is_dataset_name
from app.db.reads import read_connection
from app.errors import BeaconError
from app.query import ast, fieldcheck
from app.query.bounds import bound_warnings, built_table, result_bounds
from app.query.compiler import Compiled, Statement
from app.query.errors import QueryError, to_beacon_error
from app.query.parser import parse
from app.query.render import ndjson_encoder, render_time
from app.query.rollup import rollup_statement
from app.query.schemas import ColumnOut, ExportRequest, QueryRequest, QueryResult, QueryStatus
from app.query.timerange import time_range
from app.result_warnings import ResultWarning
from app.settings import Settings
from app.timefmt import utcnow

log = logging.getLogger("beacon.query")

DEFAULT_ROWS = 1000  # rows returned when neither the body nor the query has a `take`
EXPORT_BATCH = 2000  # rows per cursor fetch at most: memory per export stays at one batch
EXPORT_FIRST_BATCH = 200  # the first fetch, before the size of a row is known
EXPORT_BATCH_BYTES = 4 * 1024 * 1024  # what a batch aims at once the size of a row is known (events reach 1 MB)
GZIP_LEVEL = 1  # streaming is CPU-bound: level 1 compresses ~3x faster than 5 for ~20% more bytes


@lru_cache(maxsize=256)
def _parse_short(apl: str) -> ast.Query:
    return parse(apl)


def _parsed(apl: str) -> ast.Query:
    # Dashboards and monitors send the same queries again and again, and a parsed query is immutable: short
    # ones are remembered (a parse error is not: it raises again each time).
    return _parse_short(apl) if len(apl) <= 2000 else parse(apl)


def _prepare(apl: str, who: Principal, now: datetime, start: str | None, end: str | None) -> Compiled:
    """Parse, check the token may read the dataset, compile: every error here is a 4xx before any SQL."""
    try:
        query = _parsed(apl)
        if not is_dataset_name(query.dataset):
            raise QueryError(f"invalid dataset name {query.dataset!r}", query.dataset_pos)
    except QueryError as exc:
        raise to_beacon_error(apl, exc) from None
    lower, upper = time_range(start, end, now)
    require_dataset(who, query.dataset)
    try:
        return Compiled(query, now=now, start=lower, end=upper)
    except QueryError as exc:
        raise to_beacon_error(apl, exc) from None


# A range this short is planned over its few days as it is; a wider one (or none) is first clamped to the days
# the dataset has events in.
NARROW_RANGE = timedelta(days=7)

_DATASET = "SELECT id, first_day, last_day FROM datasets WHERE name = $1"


@dataclass(frozen=True)
class Target:
    """The queried dataset: its id (every statement names it as a parameter) and its recorded days."""

    id: int
    first_day: date | None
    last_day: date | None


async def _target(conn: asyncpg.Connection, who: Principal, compiled: Compiled) -> Target:
    """The dataset the query reads, by name, before any statement over its events: on Citus, where they are
    distributed by dataset_id, a statement given the id as a parameter goes to the dataset's shard alone, one that
    looked the name up itself went to every shard. 404 (naming the closest dataset) when there is none."""
    row = await conn.fetchrow(_DATASET, compiled.query.dataset)
    if row is None:
        raise await _not_found(conn, who, compiled)
    return Target(int(row[0]), row[1], row[2])


def _within_dataset_days(compiled: Compiled, target: Target) -> Compiled:
    """The query limited to the days its dataset has events in, as ingest records them (migration 0007a).

    PostgreSQL prunes partitions when it plans, by the range's constants: without a lower bound it planned
    and probed every daily partition before `end`, so one dataset with events over 2,000 days made every
    other dataset's queries take over a second. Clamped, a query reads only partitions of its own days. For
    queries with no `start_time` or a range over a week; NULL days (no events yet, or rows written other than
    by ingest) leave the query as it was.
    """
    if compiled.start is not None and compiled.end is not None and compiled.end - compiled.start <= NARROW_RANGE:
        return compiled
    if target.first_day is None or target.last_day is None:
        return compiled
    first = datetime.combine(target.first_day, dtime.min, UTC)
    after_last = datetime.combine(target.last_day + timedelta(days=1), dtime.min, UTC)
    start = first if compiled.start is None else max(compiled.start, first)
    end = after_last if compiled.end is None else min(compiled.end, after_last)
    if (start, end) == (compiled.start, compiled.end):
        return compiled
    return Compiled(compiled.query, now=compiled.planner.now, start=start, end=end)


@dataclass(frozen=True)
class Found:
    min_time: datetime | None  # earliest and latest event time in the queried range
    max_time: datetime | None
    warnings: list[ResultWarning]  # fields the query names that the dataset has never had


async def _lookup(conn: asyncpg.Connection, compiled: Compiled, dataset_id: int) -> Found:
    """The earliest and latest event time in the queried range (two short index scans in the pruned partitions)
    and which of the fields the query names the dataset has had (one index probe each), in one round trip;
    only when one is missing, every field name it has (a second read) to suggest the closest. Every part names
    the dataset by its id: on Citus the statement goes to its shard alone."""
    used = compiled.fields
    lower = " AND time >= $3" if compiled.start is not None else ""
    args: list[Any] = [dataset_id, compiled.end]
    if compiled.start is not None:
        args.append(compiled.start)
    present = "NULL"
    if used:
        args.append(list(used))
        present = f"ARRAY(SELECT name FROM dataset_fields WHERE dataset_id = $1 AND name = ANY(${len(args)}::text[]))"
    sql = (
        f"SELECT (SELECT min(time) FROM events WHERE dataset_id = $1 AND time < $2{lower}),"
        f" (SELECT max(time) FROM events WHERE dataset_id = $1 AND time < $2{lower}),"
        f" {present}"
    )
    found = await conn.fetchrow(sql, *args)
    warnings: list[ResultWarning] = []
    unknown = fieldcheck.missing(used, found[2] or ())
    if unknown:
        known = [r[0] for r in await conn.fetch(fieldcheck.KNOWN_FIELDS_SQL, dataset_id)]
        warnings = fieldcheck.unknown_field_warnings(compiled.query.dataset, unknown, known)
    return Found(found[0], found[1], warnings)


async def _lookup_beside(pool: asyncpg.Pool, compiled: Compiled, dataset_id: int) -> Found:
    async with read_connection(pool) as conn:
        return await _lookup(conn, compiled, dataset_id)


async def _not_found(conn: asyncpg.Connection, who: Principal, compiled: Compiled) -> BeaconError:
    """404 for the dataset, naming the closest one the token may read ("did you mean ...?")."""
    names = [r[0] for r in await conn.fetch(fieldcheck.DATASETS_SQL) if may_use_dataset(who, r[0])]
    meant = fieldcheck.closest(compiled.query.dataset, names)
    hint = f" Did you mean {meant!r}?" if meant else ""
    return BeaconError("not_found", f"No dataset named {compiled.query.dataset!r}.{hint}")


def _cut(text: str, size: int = 300) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."


def _database_error(exc: Exception, settings: Settings) -> BeaconError | None:
    """Failures the query itself caused, as 4xx; anything else stays a 5xx."""
    if isinstance(exc, asyncpg.exceptions.QueryCanceledError):  # PostgreSQL's statement timeout
        return BeaconError(
            "query_timeout",
            f"The query ran longer than the {settings.query_timeout_seconds:g} s statement timeout; "
            "narrow the time range or filter earlier.",
        )
    if isinstance(exc, asyncpg.exceptions.DataError):  # a bad regular expression, a value out of range, ...
        return BeaconError("invalid_query", f"The query failed on the data: {_cut(str(exc))}.", param="apl")
    if isinstance(exc, asyncpg.exceptions.ProgramLimitExceededError):  # more than 1,664 columns, ...
        return BeaconError("invalid_query", f"The query is too large for the database: {_cut(str(exc))}.", param="apl")
    if isinstance(exc, OverflowError):  # a value of the result that Python's datetime or timedelta cannot hold
        return BeaconError(
            "invalid_query",
            "A datetime or timespan in the result is out of range: datetimes must fall in the years 1 to 9999, "
            "timespans within 999,999,999 days.",
            param="apl",
        )
    return None


@contextlib.asynccontextmanager
async def _query_errors(settings: Settings) -> AsyncIterator[None]:
    """The database's failures within, as _database_error maps them."""
    try:
        yield
    except (asyncpg.PostgresError, OverflowError) as exc:
        mapped = _database_error(exc, settings)
        if mapped is None:
            raise
        raise mapped from None


async def _settle(lookup: asyncio.Future[Found]) -> None:
    """Let the lookup beside a statement finish (cancelling it would cost PostgreSQL a connection for the cancel
    request; PostgreSQL's statement timeout bounds it) and take its outcome, which matters only when the
    statement succeeded (and was awaited then); cancel it with the request."""
    current = asyncio.current_task()
    if current is not None and current.cancelling():
        lookup.cancel()
    await asyncio.wait((lookup,))
    if not lookup.cancelled():
        lookup.exception()


async def run_query(pool: asyncpg.Pool, settings: Settings, who: Principal, body: QueryRequest) -> QueryResult:
    started = time.perf_counter()
    now = utcnow()
    compiled = _prepare(body.apl, who, now, body.start_time, body.end_time)
    # The cap: min(body take, query take, server maximum); 1,000 when neither take is given.
    if body.take is not None:
        cap = min(body.take, settings.query_max_rows)
    elif compiled.query_limit is not None:
        cap = settings.query_max_rows
    else:
        cap = min(DEFAULT_ROWS, settings.query_max_rows)
    bounds = result_bounds(settings)
    lookup: asyncio.Future[Found] | None = None
    try:
        async with _query_errors(settings):  # the query pool's statement timeout holds for every read
            async with read_connection(pool) as conn:
                target = await _target(conn, who, compiled)
                compiled = _within_dataset_days(compiled, target)
                # One row more than the cap tells whether the result was cut.
                statement = _statement(compiled, cap, target.id)
                cells_cap = cap
                if not statement.layout.raw and bounds.rows_for(len(statement.layout.columns)) < cap:
                    cells_cap = bounds.rows_for(len(statement.layout.columns))  # columns known: fetch no more rows
                    statement = _statement(compiled, cells_cap, target.id)
                # The lookup of the time bounds and of the fields runs beside the statement, on a second connection.
                lookup = asyncio.ensure_future(_lookup_beside(pool, compiled, target.id))
                records = await conn.fetch(statement.sql, *statement.args)
            found = await lookup
    finally:
        if lookup is not None:
            await _settle(lookup)
    min_time, max_time = found.min_time, found.max_time
    table = await built_table(records[:cells_cap], statement.layout, bounds)
    if cells_cap < cap and len(records) > cells_cap:
        table.rows_cut = True  # rows the cap let through, left out for the cells
    return QueryResult(
        columns=[ColumnOut(c["name"], c["type"]) for c in table.columns],
        rows=table.rows,
        status=QueryStatus(
            rows_examined=None,
            rows_returned=len(table.rows),
            truncated=len(records) > cells_cap or table.rows_cut,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
            min_time=None if min_time is None else render_time(min_time),
            max_time=None if max_time is None else render_time(max_time),
        ),
        warnings=found.warnings + bound_warnings(table, bounds),
    )


def _statement(compiled: Compiled, cap: int, dataset_id: int) -> Statement:
    statement = compiled.statement(dataset_id, limit=cap + 1, newest_first=True, json_text=False)
    # Counts per minute or more come from the per-minute rollup when it gives the same answer.
    return rollup_statement(compiled, statement, cap + 1, dataset_id) or statement


async def export_chunks(
    pool: asyncpg.Pool, settings: Settings, who: Principal, body: ExportRequest
) -> AsyncGenerator[bytes, None]:
    """NDJSON of every row. The first item is b"" once the query runs: errors before it are proper HTTP
    errors; after it the response has started and an error can only cut the stream short."""
    compiled = _prepare(body.apl, who, utcnow(), body.start_time, body.end_time)
    # The statement timeout holds for each statement, so for each batch of the cursor too.
    async with read_connection(pool) as conn, _query_errors(settings), conn.transaction():  # a cursor needs one
        target = await _target(conn, who, compiled)
        compiled = _within_dataset_days(compiled, target)
        # Events in the order they are stored go out as PostgreSQL's JSON text, unparsed; a sorted result
        # comes as JSONB, so that PostgreSQL does not cast every row it sorts (app/query/compiler.py).
        statement: Statement = compiled.statement(
            target.id, limit=None, newest_first=False, json_text=not compiled.sorts
        )
        encode = ndjson_encoder(statement.layout)
        cursor = await conn.cursor(statement.sql, *statement.args)
        size = EXPORT_FIRST_BATCH
        batch = await cursor.fetch(size)
        yield b""
        rows = 0
        try:
            while batch:
                rows += len(batch)
                # Encoded on a worker thread: a batch of wide events is seconds of work (app/query/render.py).
                chunk = await asyncio.to_thread(_encode_batch, encode, batch)
                yield chunk
                if len(batch) < size:
                    break
                size = max(1, min(EXPORT_BATCH, EXPORT_BATCH_BYTES * len(batch) // max(1, len(chunk))))
                batch = await cursor.fetch(size)
        except (asyncpg.PostgresError, OverflowError):
            log.exception("export of %r failed after %d rows; the stream was cut short", compiled.query.dataset, rows)
            raise


def _encode_batch(encode: Callable[[Sequence[Any]], bytes], batch: list[asyncpg.Record]) -> bytes:
    return b"".join([encode(record) for record in batch])


async def gzip_chunks(chunks: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    async for chunk in chunks:
        # zlib lets go of the GIL while it compresses: a batch of megabytes does not hold the event loop.
        out = (
            await asyncio.to_thread(compressor.compress, chunk)
            if len(chunk) > 256 * 1024
            else compressor.compress(chunk)
        )
        if out:
            yield out
    yield compressor.flush()


@dataclass(frozen=True)
class Export:
    body: AsyncGenerator[bytes, None]
    headers: dict[str, str]
    chunks: AsyncGenerator[bytes, None]

    async def close(self) -> None:
        """Run after the response, finished or not: a client that went away leaves the generators suspended,
        and closing them is what ends the database transaction (closing an exhausted one does nothing)."""
        await self.body.aclose()
        await self.chunks.aclose()


async def start_export(
    pool: asyncpg.Pool, settings: Settings, who: Principal, body: ExportRequest, accept_encoding: str
) -> Export:
    """Run the export's query up to its first batch (so that its errors are still error responses) and
    return the stream to send, gzip-compressed when the client accepts it."""
    chunks = export_chunks(pool, settings, who, body)
    await anext(chunks)
    headers = {"Vary": "Accept-Encoding"}
    if accepts_gzip(accept_encoding):
        headers["Content-Encoding"] = "gzip"
        return Export(gzip_chunks(chunks), headers, chunks)
    return Export(chunks, headers, chunks)


def accepts_gzip(header: str) -> bool:
    """True when `Accept-Encoding` lists gzip (or `*`) with a non-zero q value."""
    for part in header.split(","):
        token, _, params = part.strip().partition(";")
        if token.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            return True
    return False

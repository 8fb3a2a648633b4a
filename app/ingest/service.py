"""Ingesting one request: read and parse the body as it streams in, COPY rows in chunks, all in one transaction.

The request's transaction holds its dataset (a shared advisory lock on its id: app/datasets/holds.py, so a
concurrent dataset delete waits for it) and holds every COPY chunk, the field upserts and the per-minute counts
(app/ingest/rollups.py); it commits only when the whole body has been read and parsed, so a 200 means durable
and any failure (a cap, corrupt gzip, a bad JSON array) stores nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession

from app.datasets.holds import hold_or_create
from app.db.engine import driver_connection
from app.errors import BeaconError
from app.ingest import copyfmt
from app.ingest.arrays import ArraySplitter, BadArray, ElementTooLarge
from app.ingest.bodies import BodyReader, Format
from app.ingest.daybounds import DayBounds
from app.ingest.fields import FieldCache, record_fields
from app.ingest.limits import IngestLimits, size_text
from app.ingest.lines import LineSplitter
from app.ingest.partitions import PartitionCache
from app.ingest.rollups import add_counts
from app.ingest.rows import InvalidEvent, RowBuilder
from app.ingest.schemas import IngestResult
from app.ingest.timestamps import TimeReader, datetime_to_us
from app.result_warnings import ResultWarning


@dataclass
class IngestCaches:
    """Per-process knowledge that spares the database a round trip: partitions and recorded fields (one per
    process, in the app's Services)."""

    partitions: PartitionCache = field(default_factory=PartitionCache)
    fields: FieldCache = field(default_factory=FieldCache)
    days: DayBounds = field(default_factory=DayBounds)


@dataclass(frozen=True)
class IngestRequest:
    dataset: str
    fmt: Format
    gzip: bool
    timestamp_field: str
    read_time: TimeReader
    arrival: datetime


async def lock_dataset(session: AsyncSession, name: str) -> int:
    """The dataset's id, creating it if needed, held against deletion until this transaction ends."""
    dataset_id, _ = await lock_or_create_dataset(session, name)
    return dataset_id


async def lock_or_create_dataset(session: AsyncSession, name: str) -> tuple[int, bool]:
    """As `lock_dataset`, and whether this transaction created it."""
    return await hold_or_create(session, name)


class ChunkWriter:
    """COPYs each chunk while the next one is parsed: PostgreSQL would otherwise idle (in the request's
    transaction, waiting for data) for as long as each chunk takes to parse. One COPY at a time per request."""

    def __init__(self, conn: asyncpg.Connection, caches: IngestCaches, dsn: str) -> None:
        self._conn = conn
        self._caches = caches
        self._dsn = dsn
        self._copying: asyncio.Future[None] | None = None
        self.blocks = 0
        self.rows = 0

    async def write(self, payload: bytearray, days: set[int], rows: int) -> None:
        if not rows:
            return
        await self.finish()
        await self._caches.partitions.ensure(self._dsn, days)
        self._copying = asyncio.ensure_future(self._write(payload, set(days), rows))

    async def finish(self) -> None:
        """Wait for the chunk being COPYed (its error is raised here)."""
        copying, self._copying = self._copying, None
        if copying is not None:
            await copying

    async def settle(self) -> None:
        """After a failure elsewhere: let the chunk being COPYed end (it is small and bounded), so that the
        connection is free for the rollback; its own error, if any, is dropped (the request fails anyway)."""
        copying, self._copying = self._copying, None
        if copying is not None:
            await asyncio.gather(copying, return_exceptions=True)

    async def _write(self, payload: bytearray, days: set[int], rows: int) -> None:
        try:
            # A savepoint, so that a day dropped by retention elsewhere since we cached it can be retried.
            async with self._conn.transaction():
                await self._copy(payload)
        except asyncpg.CheckViolationError as exc:
            if "no partition" not in str(exc):
                raise
            self._caches.partitions.forget(days)
            await self._caches.partitions.ensure(self._dsn, days)
            await self._copy(payload)
        self.blocks += 1
        self.rows += rows

    async def _copy(self, payload: bytearray) -> None:
        await self._conn.copy_to_table(
            "events", source=memoryview(payload), columns=list(copyfmt.COLUMNS), format="binary"
        )


async def add_events(
    builder: RowBuilder, writer: ChunkWriter, items: list[Any], limits: IngestLimits, **kw: bool
) -> None:
    pos = 0
    while pos < len(items):  # a decompressed chunk may hold more than a block's worth of small events
        take = limits.chunk_rows - builder.rows
        builder.add_lines(items[pos : pos + take], **kw)
        pos += take
        if builder.rows >= limits.chunk_rows or builder.chunk_bytes >= limits.chunk_bytes:
            await writer.write(*builder.take_chunk())


async def _read_ndjson(
    body: AsyncIterator[bytes], builder: RowBuilder, writer: ChunkWriter, limits: IngestLimits
) -> None:
    splitter = LineSplitter(builder.max_event_bytes)
    too_many = f"An NDJSON body may hold at most {limits.max_ndjson_lines:,} lines (blank lines count)"
    seen = 0  # lines, blank ones included: the bound on a request's work is checked before the work
    async for chunk in body:
        lines, oversized, nul = splitter.feed_checked(chunk)
        seen += len(lines) + oversized
        if seen > limits.max_ndjson_lines:
            raise _too_many(too_many)
        await add_events(builder, writer, lines, limits, may_hold_nul=nul)
        # Let the event loop run between decompressed chunks even when the next one is already buffered: other
        # requests' COPY data waits in their transports until it does, and PostgreSQL idles meanwhile
        # (measured: 149k -> 165k events/s in bench/ingest.py).
        await asyncio.sleep(0)
        if oversized:
            builder.fail_next(f"event is larger than the {size_text(builder.max_event_bytes)} limit")
    last = splitter.finish()
    if seen + len(last) > limits.max_ndjson_lines:
        raise _too_many(too_many)
    await add_events(builder, writer, last, limits)


async def _read_array(
    body: AsyncIterator[bytes], builder: RowBuilder, writer: ChunkWriter, limits: IngestLimits
) -> None:
    """A JSON array (or one object), element by element as it streams in: see arrays.py."""
    splitter = ArraySplitter(limits.max_array_element_bytes)

    async def add(elements: list[Any]) -> None:
        if builder.index + len(elements) > limits.max_array_events:
            raise _too_many(f"A JSON-array body may hold at most {limits.max_array_events:,} events")
        await add_events(builder, writer, elements, limits, strict=True)

    try:
        async for chunk in body:
            await add(splitter.feed(chunk))
            await asyncio.sleep(0)
        await add(splitter.finish())
    except BadArray as exc:
        raise BeaconError("invalid_json", f"The body is not a valid JSON array: {exc}; nothing was stored.") from None
    except InvalidEvent as exc:
        raise BeaconError(
            "invalid_json", f"Event {exc.index} of the JSON array is not valid JSON: {exc.reason}; nothing was stored."
        ) from None
    except ElementTooLarge as exc:
        raise BeaconError(
            "payload_too_large",
            f"An element of the JSON array runs past {size_text(exc.limit)} (events over "
            f"{size_text(limits.max_event_bytes)} fail alone, but are read whole first); nothing was stored. "
            "Send such data as NDJSON.",
        ) from None


def _too_many(what: str) -> BeaconError:
    return BeaconError("too_many_events", f"{what}; nothing was stored. Send smaller batches.")


async def ingest(
    session: AsyncSession,
    req: IngestRequest,
    body: BodyReader,
    *,
    limits: IngestLimits,
    caches: IngestCaches,
    dsn: str,
) -> IngestResult:
    dataset_id = await lock_dataset(session, req.dataset)
    conn = await driver_connection(session)
    builder = RowBuilder(
        dataset_id=dataset_id,
        arrival_us=datetime_to_us(req.arrival),
        timestamp_field=req.timestamp_field,
        read_time=req.read_time,
        max_event_bytes=limits.max_event_bytes,
        max_days=limits.max_days,
    )
    writer = ChunkWriter(conn, caches, dsn)
    try:
        if req.fmt is Format.NDJSON:
            await _read_ndjson(body.chunks(), builder, writer, limits)
        else:
            await _read_array(body.chunks(), builder, writer, limits)
        await writer.write(*builder.take_chunk())
        await writer.finish()
    except BaseException:
        await writer.settle()
        raise

    new_shapes = caches.fields.new_shapes(dataset_id, builder.shapes)
    new_fields = caches.fields.unknown_fields(dataset_id, new_shapes) if new_shapes else {}
    if writer.rows:
        await record_fields(conn, dataset_id, new_fields)
        await add_counts(conn, dataset_id, builder.minutes)
        bounds = await caches.days.widen(conn, dataset_id, builder.days)
        await session.commit()
        caches.fields.remember(dataset_id, new_shapes, new_fields)
        caches.days.remember(dataset_id, bounds)
    else:
        await session.rollback()  # nothing to store: a request of only failed events creates no dataset
    return IngestResult(
        dataset=req.dataset,
        ingested=writer.rows,
        failed=builder.failed,
        failures=builder.failures,
        processed_bytes=body.processed,
        blocks_created=writer.blocks,
        warnings=time_warnings(builder, writer.rows),
    )


def time_warnings(builder: RowBuilder, ingested: int) -> list[ResultWarning]:
    """Events stamped with their arrival time although they carry a field that looks like their time."""
    names = builder.time_fields_ignored() if ingested else []
    if not names:
        return []
    name = names[0]
    count = min(builder.stamped, ingested)
    field = builder.timestamp_field
    others = ", ".join(f"`{n}`" for n in names[1:])
    also = f" (they also have {others})" if others else ""
    return [
        ResultWarning(
            code="time_from_arrival",
            message=f"{count:,} {'events' if count != 1 else 'event'} had no `{field}` and "
            f"{'were' if count != 1 else 'was'} stamped with the arrival time, "
            f"but {'carry' if count != 1 else 'carries'} `{name}`{also}: "
            f"pass `timestamp-field={name}` (and `timestamp-format` if it is not RFC 3339 or a unix time) "
            "to take the event time from it.",
            field=name,
            param="timestamp-field",
        )
    ]

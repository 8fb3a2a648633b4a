"""Ingesting events that arrive already split, into one dataset or several: the shippers' protocols (app/shippers/).

A protocol's decoder yields runs of events, `(dataset, [raw JSON object, ...])`, in request order. They go through what
`POST /v1/ingest` uses (service.py): the same row builder (limits, failures, flattening, times), COPY chunks,
field discovery, per-minute counts and day bounds, in one transaction for the whole request, so a request's
events are committed together or not at all, whichever datasets they go to.

The decoder is pulled run by run, and the event loop runs between slices of them: a large request never holds it
for longer than a slice takes to decode and build.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.engine import driver_connection
from app.errors import BeaconError
from app.ingest.fields import record_fields
from app.ingest.limits import IngestLimits
from app.ingest.rollups import add_counts
from app.ingest.rows import MAX_FAILURES_SHOWN, Failure, RowBuilder
from app.ingest.service import ChunkWriter, IngestCaches, add_events, lock_or_create_dataset, time_warnings
from app.ingest.timestamps import datetime_to_us, default_reader
from app.result_warnings import ResultWarning

SLICE = 2_000  # events decoded between two turns of the event loop


@dataclass
class DatasetResult:
    """What one request did to one dataset. A failure's `index` is the event's position among the events of the
    request that went to this dataset."""

    dataset: str
    ingested: int = 0
    failed: int = 0
    failures: list[Failure] = field(default_factory=list)
    warnings: list[ResultWarning] = field(default_factory=list)


@dataclass
class _Target:
    result: DatasetResult
    dataset_id: int = 0
    builder: RowBuilder | None = None  # None: refused, the request already writes to as many datasets as it may
    created: bool = False  # by this request's transaction
    refused: int = 0


@dataclass(frozen=True)
class EventOptions:
    timestamp_field: str
    arrival: datetime
    failures_shown: int = MAX_FAILURES_SHOWN  # a protocol that answers per event asks for them all


async def ingest_events(
    session: AsyncSession,
    runs: Iterable[tuple[str, list[bytes]]],
    options: EventOptions,
    *,
    limits: IngestLimits,
    caches: IngestCaches,
    dsn: str,
) -> dict[str, DatasetResult]:
    """Store the events of `runs` and commit; the result of each dataset, in the order they first appear.

    A run is events of one dataset (its name already checked against the token), in request order, at most about
    `SLICE` of them: the event loop runs between runs once a slice's worth has been read. Events must not be blank
    (a blank item would be skipped without a position, and the positions of failures would no longer match the
    caller's)."""
    targets: dict[str, _Target] = {}
    writer: ChunkWriter | None = None
    count = since_turn = 0
    try:
        for name, lines in runs:
            count += len(lines)
            if count > limits.max_request_events:
                raise BeaconError(
                    "too_many_events",
                    f"A request may hold at most {limits.max_request_events:,} events; nothing was stored. "
                    "Send smaller batches.",
                )
            target = targets.get(name)
            if target is None:
                target = targets[name] = await _open(session, name, targets, options, limits)
                if writer is None and target.builder is not None:
                    writer = ChunkWriter(await driver_connection(session), caches, dsn)
            if target.builder is None or writer is None:
                _refuse(target, len(lines), limits, options)
            else:
                await add_events(target.builder, writer, lines, limits)
            since_turn += len(lines)
            if since_turn >= SLICE:
                since_turn = 0
                await asyncio.sleep(0)
        if writer is not None:
            for target in targets.values():
                if target.builder is not None:
                    await writer.write(*target.builder.take_chunk())
            await writer.finish()
    except BaseException:
        if writer is not None:
            await writer.settle()
        raise
    await _commit(session, targets, writer, caches)
    return {name: target.result for name, target in targets.items()}


def runs_of(dataset: str, lines: Iterable[bytes], size: int = SLICE) -> Iterator[tuple[str, list[bytes]]]:
    """`lines` of one dataset as runs of at most `size`."""
    source = iter(lines)
    while run := list(islice(source, size)):
        yield dataset, run


async def _open(
    session: AsyncSession, name: str, targets: dict[str, _Target], options: EventOptions, limits: IngestLimits
) -> _Target:
    target = _Target(DatasetResult(dataset=name))
    if sum(1 for t in targets.values() if t.builder is not None) >= limits.max_request_datasets:
        return target
    target.dataset_id, target.created = await lock_or_create_dataset(session, name)
    target.builder = RowBuilder(
        dataset_id=target.dataset_id,
        arrival_us=datetime_to_us(options.arrival),
        timestamp_field=options.timestamp_field,
        read_time=default_reader,
        max_event_bytes=limits.max_event_bytes,
        max_days=limits.max_days,
        failures_shown=options.failures_shown,
    )
    return target


def _refuse(target: _Target, count: int, limits: IngestLimits, options: EventOptions) -> None:
    result = target.result
    error = (
        f"a request may write to at most {limits.max_request_datasets} datasets; "
        f"send the events of {result.dataset!r} in another request"
    )
    for _ in range(count):
        if len(result.failures) < options.failures_shown:
            result.failures.append(Failure(index=target.refused, error=error))
        target.refused += 1
    result.failed += count


async def _commit(
    session: AsyncSession, targets: dict[str, _Target], writer: ChunkWriter | None, caches: IngestCaches
) -> None:
    """Fields, counts and day bounds of each dataset written to, then one commit (nothing stored: a rollback)."""
    opened = [t for t in targets.values() if t.builder is not None]
    for target in opened:
        builder = target.builder
        assert builder is not None
        result = target.result
        result.ingested = builder.index - builder.failed  # every event the builder was given is a row or a failure
        result.failed += builder.failed
        result.failures = builder.failures
        result.warnings = time_warnings(builder, result.ingested)
    if writer is None or not any(t.result.ingested for t in opened):
        await session.rollback()  # only failed events: no dataset is created
        return
    conn = await driver_connection(session)
    remember = []
    # In the order of the datasets' ids, so that requests writing to the same datasets lock rows in one order.
    for target in sorted(opened, key=lambda t: t.dataset_id):
        builder = target.builder
        assert builder is not None
        if not target.result.ingested:
            if target.created:  # only failed events: the dataset this request created goes again
                await conn.execute("DELETE FROM datasets WHERE id = $1", target.dataset_id)
            continue
        new_shapes = caches.fields.new_shapes(target.dataset_id, builder.shapes)
        new_fields = caches.fields.unknown_fields(target.dataset_id, new_shapes) if new_shapes else {}
        await record_fields(conn, target.dataset_id, new_fields)
        await add_counts(conn, target.dataset_id, builder.minutes)
        bounds = await caches.days.widen(conn, target.dataset_id, builder.days)
        remember.append((target.dataset_id, new_shapes, new_fields, bounds))
    await session.commit()
    for dataset_id, new_shapes, new_fields, bounds in remember:
        caches.fields.remember(dataset_id, new_shapes, new_fields)
        caches.days.remember(dataset_id, bounds)

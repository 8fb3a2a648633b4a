"""Batching ingesters: add events one by one; they go out as gzip NDJSON batches (10,000 events or 10 MB).

A batch that finally fails (after the back-off's retries) raises `IngestBatchError` carrying its events, so
nothing is dropped silently. Events the service refused one by one (`failed` in its results) are surfaced in
`totals.failures` with their position among all events added.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, Unpack

from beacon_client import batching
from beacon_client.batching import Batch, BatchBuilder
from beacon_client.call import Call
from beacon_client.endpoints import events as endpoints
from beacon_client.errors import BeaconClientError, IngestBatchError
from beacon_client.models import IngestResult, ResultWarning

if TYPE_CHECKING:
    from beacon_client.aio import AsyncClient  # noqa: F401  (named in the generic bases below)
    from beacon_client.sync import Client  # noqa: F401

ClientT = TypeVar("ClientT")


@dataclass(frozen=True)
class EventFailure:
    index: int  # position of the event among all events added to the ingester
    error: str


@dataclass
class IngestTotals:
    batches: int = 0
    events_sent: int = 0
    ingested: int = 0
    failed: int = 0
    bytes_sent: int = 0  # compressed, as on the wire
    processed_bytes: int = 0  # as the service counted them (decompressed)
    failures: list[EventFailure] = field(default_factory=list)  # the service reports the first 10 per batch
    warnings: list[ResultWarning] = field(default_factory=list)  # each (code, field) once, as first reported


class IngesterOptions(TypedDict, total=False):
    timestamp_field: str | None
    timestamp_format: str | None
    max_events: int  # flush at this many events (default 10,000)
    max_bytes: int  # or at this many bytes of gzip NDJSON (default just under 10 MB)


class _Book:
    """What both ingesters share: the batch builder, the request for a batch and the running totals."""

    def __init__(
        self,
        dataset: str,
        *,
        timestamp_field: str | None = None,
        timestamp_format: str | None = None,
        max_events: int = batching.MAX_EVENTS,
        max_bytes: int = batching.MAX_BYTES,
    ) -> None:
        self.dataset = dataset
        self.timestamp_field = timestamp_field
        self.timestamp_format = timestamp_format
        self.builder = BatchBuilder(max_events=max_events, max_bytes=max_bytes)
        self.totals = IngestTotals()

    def call(self, batch: Batch) -> Call[IngestResult]:
        return endpoints.ingest_raw(
            self.dataset,
            batch.body,
            timestamp_field=self.timestamp_field,
            timestamp_format=self.timestamp_format,
        )

    def record(self, batch: Batch, result: IngestResult) -> None:
        t = self.totals
        t.batches += 1
        t.events_sent += len(batch.events)
        t.ingested += result.ingested
        t.failed += result.failed
        t.bytes_sent += len(batch.body)
        t.processed_bytes += result.processed_bytes
        t.failures.extend(EventFailure(batch.first_index + f.index, f.error) for f in result.failures)
        seen = {(w.code, w.field) for w in t.warnings}
        t.warnings.extend(w for w in result.warnings if (w.code, w.field) not in seen)

    def failure(self, batch: Batch, cause: BeaconClientError) -> IngestBatchError:
        t = self.totals  # a snapshot: later batches go on
        done = replace(t, failures=list(t.failures), warnings=list(t.warnings))
        return IngestBatchError(events=batch.events, first_index=batch.first_index, cause=cause, totals=done)


class _Ingester(Generic[ClientT]):
    def __init__(self, client: ClientT, dataset: str, **options: Unpack[IngesterOptions]) -> None:
        self._client = client
        self._book = _Book(dataset, **options)

    @property
    def totals(self) -> IngestTotals:
        return self._book.totals

    @property
    def pending(self) -> int:
        """Events added but not sent yet."""
        return len(self._book.builder)


class Ingester(_Ingester["Client"]):
    """`with client.ingester("web") as ing: ing.add(event)`; leaving the block sends what is left."""

    def add(self, event: Any) -> None:
        batch = self._book.builder.add(event)
        if batch is not None:
            self._deliver(batch)

    def extend(self, events: Iterable[Any]) -> None:
        for event in events:
            self.add(event)

    def flush(self) -> None:
        batch = self._book.builder.seal()
        if batch is not None:
            self._deliver(batch)

    def close(self) -> IngestTotals:
        self.flush()
        return self.totals

    def _deliver(self, batch: Batch) -> None:
        try:
            result = self._client._send(self._book.call(batch))
        except BeaconClientError as exc:
            raise self._book.failure(batch, exc) from exc
        self._book.record(batch, result)

    def __enter__(self) -> Ingester:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.flush()  # also on an error in the block: what was added is sent, never dropped silently


class AsyncIngester(_Ingester["AsyncClient"]):
    """`async with client.ingester("web") as ing: await ing.add(event)`; leaving the block sends what is left."""

    async def add(self, event: Any) -> None:
        batch = self._book.builder.add(event)
        if batch is not None:
            await self._deliver(batch)

    async def extend(self, events: Iterable[Any] | AsyncIterable[Any]) -> None:
        if isinstance(events, AsyncIterable):
            async for event in events:
                await self.add(event)
        else:
            for event in events:
                await self.add(event)

    async def flush(self) -> None:
        batch = self._book.builder.seal()
        if batch is not None:
            await self._deliver(batch)

    async def close(self) -> IngestTotals:
        await self.flush()
        return self.totals

    async def _deliver(self, batch: Batch) -> None:
        try:
            result = await self._client._send(self._book.call(batch))
        except BeaconClientError as exc:
            raise self._book.failure(batch, exc) from exc
        self._book.record(batch, result)

    async def __aenter__(self) -> AsyncIngester:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.flush()

"""What the shippers' endpoints share: the dataset header, the ingest environment, event times, the final step.

Each protocol decodes its body into runs of `(dataset, [raw JSON object, ...])` and hands them to `store`, which
runs them through app/ingest/batches.py: the path of `POST /v1/ingest`, with nothing left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from litestar import Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import may_use_dataset
from app.auth import principal
from app.datasets.names import is_dataset_name
from app.errors import BeaconError
from app.ingest.batches import DatasetResult, EventOptions, ingest_events
from app.ingest.bodies import is_gzip, read_body
from app.ingest.limits import IngestLimits
from app.ingest.timestamps import EPOCH
from app.services import Services
from app.settings import Settings, asyncpg_dsn

DATASET_HEADER = "X-Beacon-Dataset"
# From here up, nanoseconds are at least 10**14 microseconds, which the row builder reads as microseconds
# (app/ingest/timestamps.py: number_to_us): 1973-03-03.
_NS_BY_MAGNITUDE = 100_000_000_000_000_000


def header_dataset(request: Request[Any, Any, Any]) -> str | None:
    """The dataset named by `X-Beacon-Dataset`, checked; None when the header is absent."""
    value = request.headers.get(DATASET_HEADER)
    if value is None:
        return None
    name = value.strip()
    if not is_dataset_name(name):
        raise BeaconError(
            "invalid_parameter",
            f"`{DATASET_HEADER}` holds an invalid dataset name {name!r}: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            param=DATASET_HEADER,
        )
    return name


def limits_for(settings: Settings) -> IngestLimits:
    """The ingest limits, with the decompressed cap of bodies that are decoded whole."""
    base = IngestLimits()
    cap = settings.ingest_max_decompressed_bytes
    return replace(base, max_decompressed_bytes=min(cap, base.max_decoded_body_bytes))


async def read_whole_body(request: Request[Any, Any, Any], limits: IngestLimits) -> bytes:
    """The body, decompressed per `Content-Encoding` (gzip or none), read whole before any database work."""
    return await read_body(request, gzip=is_gzip(request.headers.get("content-encoding")), limits=limits)


def ns_time(ns: int) -> int | str:
    """An event time in unix nanoseconds as the `_time` value for the row builder, exactly: whole microseconds from
    1973-03-03 on (where the builder reads a number of that size as microseconds, as its compiled path does;
    nanoseconds have 19 digits, which only its general path reads), RFC 3339 text before that (where a number would be
    taken for another unit). Negative numbers stay numbers: the builder refuses them."""
    if ns >= _NS_BY_MAGNITUDE:
        return ns // 1000
    if ns < 0:
        return ns
    moment = EPOCH + timedelta(microseconds=ns // 1000)
    return moment.isoformat().replace("+00:00", "Z")


@dataclass
class Stored:
    """What `store` did: each dataset's result, and the totals."""

    datasets: dict[str, DatasetResult]

    @property
    def ingested(self) -> int:
        return sum(r.ingested for r in self.datasets.values())

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.datasets.values())


def arrival_warnings(stored: Stored, without: str) -> list[str]:
    """The ingest path's `time_from_arrival` warnings, worded for a protocol (which has no `timestamp-field`):
    events stamped with their arrival time for want of `without`, though they carry a field that looks like a time."""
    found = []
    for result in stored.datasets.values():
        for warning in result.warnings:
            if warning.code == "time_from_arrival" and warning.field:
                found.append(
                    f"{result.dataset}: events without {without} were stamped with their arrival time, though they "
                    f"carry `{warning.field}`"
                )
    return found


def may_use(request: Request[Any, Any, Any], dataset: str) -> bool:
    return may_use_dataset(principal(request), dataset)


async def store(
    services: Services,
    db: AsyncSession,
    runs: Iterable[tuple[str, list[bytes]]],
    *,
    limits: IngestLimits,
    options: EventOptions,
    rejected: int = 0,
) -> Stored:
    """Ingest `runs` of events (their datasets checked, named and allowed: app/ingest/batches.py) in one transaction;
    counts them in the metrics, with the events the protocol's decoder `rejected` before they could be ingested."""
    results = await ingest_events(
        db,
        runs,
        options,
        limits=limits,
        caches=services.ingest_caches,
        dsn=asyncpg_dsn(services.settings.database_url or ""),
    )
    stored = Stored(results)
    services.metrics.events_ingested.inc(stored.ingested)
    services.metrics.events_failed.inc(stored.failed + rejected)
    return stored

"""`beacon ingest`'s loop: events through the batching ingester, progress, failures and the summary."""

from __future__ import annotations

import time
from array import array
from typing import NoReturn

import click

from beacon_client import BeaconAPIError, Client, IngestBatchError, ResultWarning
from beacon_client.cli.common import describe, fail, warn
from beacon_client.cli.reading import EventSource, IngestProgress, SourceError

SHOW_FAILURES = 10


def _as_options(w: ResultWarning, timestamp_field: str | None) -> ResultWarning:
    """A warning that names a request parameter, told as this command's option (over all batches)."""
    if w.code == "time_from_arrival" and w.field:
        message = (
            f"events without `{timestamp_field or '_time'}` were stamped with their arrival time, but they carry "
            f"`{w.field}`: pass --timestamp-field {w.field} "
            "(and --timestamp-format if it is not RFC 3339 or a unix time)"
        )
        return ResultWarning(code=w.code, message=message, field=w.field, param="--timestamp-field")
    return w


def run_ingest(
    client: Client,
    source: EventSource,
    *,
    dataset: str,
    timestamp_field: str | None,
    timestamp_format: str | None,
    max_failed: int,
    progress: IngestProgress,
) -> int:
    """Ingest every event of `source`; returns the exit status (exits 1 itself when a batch fails)."""
    started = time.monotonic()
    ing = client.ingester(dataset, timestamp_field=timestamp_field, timestamp_format=timestamp_format)
    positions = array("Q")  # event index -> line (or item) number, to name failed events by their place

    def summary() -> None:
        t = ing.totals
        seconds = time.monotonic() - started
        failed = t.failed + len(source.bad)
        click.echo(
            f"ingested {t.ingested:,} events into {dataset} ({failed:,} failed) in {seconds:.1f} s, "
            f"{t.events_sent / max(seconds, 1e-6):,.0f} events/s"
        )

    def stop(message: str) -> NoReturn:
        """The error; the summary first only when the service took some events (no "ingested 0 events")."""
        progress.done()
        if ing.totals.ingested or ing.totals.failed:
            summary()
            fail(message)
        fail(f"{message}; nothing was ingested")

    def show(force: bool = False) -> None:
        t = ing.totals
        progress.update(
            len(positions),
            t.ingested,
            t.bytes_sent,
            done_bytes=source.bytes_read(),
            total_bytes=source.size,
            force=force,
        )

    try:
        for position, event in source:
            positions.append(position)
            ing.add(event)
            if len(positions) % 1000 == 0:
                show()
        ing.flush()
    except SourceError as exc:
        stop(str(exc))
    except IngestBatchError as exc:
        first, last = positions[exc.first_index], positions[exc.first_index + len(exc.events) - 1]
        cause = describe(exc.cause) if isinstance(exc.cause, BeaconAPIError) else str(exc.cause)
        stop(
            f"a batch of {len(exc.events):,} events ({source.unit}s {first} to {last}) was not ingested "
            f"and nothing after it was sent: {cause}"
        )
    show(force=True)
    progress.done()
    summary()
    warn(_as_options(w, timestamp_field) for w in ing.totals.warnings)
    failures = sorted(
        [(b.position, b.error) for b in source.bad]
        + [(positions[f.index], f.error) for f in ing.totals.failures if f.index < len(positions)]
    )
    for position, error in failures[:SHOW_FAILURES]:
        click.echo(f"{source.unit} {position}: {error}", err=True)
    failed = ing.totals.failed + len(source.bad)
    if failed > max_failed:
        click.echo(f"error: {failed:,} events failed (allowed: {max_failed:,})", err=True)
        return 1
    return 0

"""What the client commands share: the client from --url/--token, and errors as one stderr line + exit 1."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from app.client import Backoff, BeaconAPIError, BeaconConnectionError, Client, ResultWarning


def make_client(url: str, token: str | None) -> Client:
    if not token:
        raise click.UsageError("no API token: pass --token or set BEACON_TOKEN")
    raw = os.environ.get("BEACON_MAX_RETRIES", "").strip()
    if raw and not (raw.isdigit() and int(raw) <= 10):
        raise click.UsageError(f"BEACON_MAX_RETRIES must be a whole number from 0 to 10, got {raw!r}")
    return Client(url, token, backoff=Backoff(max_retries=int(raw)) if raw else None)


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def warn(warnings: Iterable[ResultWarning]) -> None:
    """The service's warnings, one `warning:` line each on stderr (stdout stays the result alone)."""
    for w in warnings:
        click.echo(f"warning: {w.message}", err=True)


def describe(exc: BeaconAPIError) -> str:
    where = f" (param {exc.param})" if exc.param else ""
    return f"{exc.code}: {exc.message}{where} [status {exc.status}, request {exc.request_id or 'unknown'}]"


@contextmanager
def reporting(url: str) -> Iterator[None]:
    """Turn the client's errors into one stderr line and exit status 1."""
    try:
        yield
    except BeaconAPIError as exc:
        fail(describe(exc))
    except BeaconConnectionError as exc:
        fail(f"cannot reach Beacon at {url}: {exc}")

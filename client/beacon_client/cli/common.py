"""What the client commands share: --url/--token options, the client they make, errors as one stderr line + exit 1.

Imports only click at the top (see beacon_client/cli/__init__.py): the client library (httpx, msgspec) is loaded by
the command that runs, not by `beacon --help`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    from beacon_client import BeaconAPIError, Client, ResultWarning

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_URL = "http://127.0.0.1:8000"  # beacon_client.retrying.DEFAULT_URL, without importing the client for --help


def token_option(func: F) -> F:
    return click.option("--token", envvar="BEACON_TOKEN", help="API token [env BEACON_TOKEN].")(func)


def server_option(*names: str) -> Callable[[F], F]:
    return click.option(
        *names,
        "url",
        envvar="BEACON_URL",
        default=DEFAULT_URL,
        show_default=True,
        help="Beacon's address [env BEACON_URL].",
    )


def connection_options(func: F) -> F:
    """--url/--server and --token, for commands that have no --url of their own."""
    return server_option("--url", "--server")(token_option(func))


def format_option(*choices: str) -> Callable[[F], F]:
    """`--format` (the parameter `fmt`): one of `choices`, the first the default."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=choices[0],
        show_default=True,
        help="Output format.",
    )


TABLE_OR_JSON = format_option("table", "json")


def make_client(url: str, token: str | None) -> Client:
    from beacon_client import Backoff, Client

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
    from beacon_client import BeaconAPIError, BeaconConnectionError

    try:
        yield
    except BeaconAPIError as exc:
        fail(describe(exc))
    except BeaconConnectionError as exc:
        fail(f"cannot reach Beacon at {url}: {exc}")

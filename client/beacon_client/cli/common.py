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
    _say_retries()
    return Client(url, token, backoff=Backoff(max_retries=int(raw)) if raw else None)


def _say_retries() -> None:
    """Each retry of the client (a server restarting, a busy one, or a typo in BEACON_URL: up to ~10 s of back-off
    before the error) as a `warning:` line on stderr while it happens, rather than a silent wait."""
    import logging

    log = logging.getLogger("beacon.client")  # beacon_client.retrying logs each retry there, at INFO
    if any(getattr(h, "beacon_cli", False) for h in log.handlers):
        return

    class Lines(logging.Handler):
        beacon_cli = True

        def emit(self, record: logging.LogRecord) -> None:
            say_warning(record.getMessage())

    log.addHandler(Lines(logging.INFO))
    log.setLevel(logging.INFO)


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def say_warning(message: str) -> None:
    """One `warning:` line on stderr (stdout stays the result alone)."""
    click.echo(f"warning: {message}", err=True)


def warn(warnings: Iterable[ResultWarning]) -> None:
    """The service's warnings, one `warning:` line each."""
    for w in warnings:
        say_warning(w.message)


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

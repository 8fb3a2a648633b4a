"""`beacon dev …`: what a newcomer's first hour needs on their own machine (the README's walkthrough):

- `beacon dev sample`: an hour of generated web requests as NDJSON, for `beacon ingest - --dataset web`;
- `beacon dev secret`: a new webhook signing secret (`whsec_…`), to give a notifier and a receiver;
- `beacon dev receiver`: a webhook receiver on this machine that prints what it receives, checking the Standard
  Webhooks signature when it has the secret (a bad one is answered 401, as a real receiver should).

Only click and the standard library are imported at the top (`beacon --help` stays light: app/cli.py).
"""

from __future__ import annotations

import base64
import json
import random
import secrets
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import click

# (service, method, path, share of requests): a small shop.
ROUTES = (
    ("web", "GET", "/", 30),
    ("web", "GET", "/products", 25),
    ("api", "GET", "/api/cart", 20),
    ("api", "POST", "/api/cart", 15),
    ("checkout", "POST", "/checkout", 10),
)


@click.group()
def dev() -> None:
    """Helpers for trying Beacon on this machine: a sample stream, a webhook secret, a webhook receiver."""


def sample_events(minutes: int, per_minute: int, seed: int, end: datetime) -> list[dict[str, Any]]:
    """Web requests spread evenly over the `minutes` before `end`, oldest first. The same seed gives the same
    requests (only their times follow `end`): counts by service or status are the same on every run."""
    rng = random.Random(seed)
    weights = [w for *_, w in ROUTES]
    total = minutes * per_minute
    start = end - timedelta(minutes=minutes)
    events = []
    for i in range(total):
        service, method, path, _ = rng.choices(ROUTES, weights)[0]
        roll = rng.random()
        if roll < 0.01:
            status = 500
        elif roll < 0.015:
            status = 503
        elif roll < 0.05:
            status = 404
        else:
            status = 201 if method == "POST" else 200
        slow = 3.0 if service == "checkout" else 1.0
        duration = round(rng.lognormvariate(3.2, 0.6) * slow, 1)
        at = start + timedelta(seconds=60 * i / per_minute)
        time = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        events.append(
            {
                "_time": time,
                "service": service,
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": duration,
            }
        )
    return events


@dev.command("sample")
@click.option("--minutes", type=click.IntRange(1, 7 * 24 * 60), default=60, show_default=True, help="How far back.")
@click.option("--per-minute", type=click.IntRange(1, 10_000), default=60, show_default=True, help="Requests a minute.")
@click.option("--seed", type=int, default=1, show_default=True, help="Another seed, other requests.")
def sample(minutes: int, per_minute: int, seed: int) -> None:
    """Print generated web requests of the last MINUTES as NDJSON (service, method, path, status, duration_ms), for
    `beacon ingest - --dataset web`."""
    end = datetime.now(UTC).replace(microsecond=0)
    out = sys.stdout
    for event in sample_events(minutes, per_minute, seed, end):
        out.write(json.dumps(event, separators=(",", ":")) + "\n")


@dev.command("secret")
def secret() -> None:
    """Print a new webhook signing secret (`whsec_` and 32 random bytes in base64), for a notifier's
    `signing_secret` and `beacon dev receiver --secret`."""
    click.echo("whsec_" + base64.b64encode(secrets.token_bytes(32)).decode())


@dev.command("receiver")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=9000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--secret",
    envvar="BEACON_WEBHOOK_SECRET",
    help="The notifier's signing secret: signatures are checked [env BEACON_WEBHOOK_SECRET].",
)
@click.option("--json", "show_json", is_flag=True, help="Print each body as well.")
def receiver(host: str, port: int, secret: str | None, show_json: bool) -> None:
    """A webhook receiver for trying notifiers: prints each message Beacon sends (its type, title and summary),
    checking its Standard Webhooks signature when given the secret. Ctrl-C stops it.

    Beacon sends to this machine only in development mode (`beacon serve --dev`)."""
    from http.server import ThreadingHTTPServer

    from app.dev_receiver import Receiver

    if secret and not secret.startswith("whsec_"):
        raise click.BadParameter("a signing secret starts with whsec_ (see `beacon dev secret`)", param_hint="--secret")
    handler = type("BoundReceiver", (Receiver,), {"secret": secret, "show_json": show_json})
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    checked = "checking signatures with the secret given" if secret else "not checking signatures (no --secret)"
    click.echo(f"receiver: listening on http://{host}:{server.server_address[1]}/, {checked}; Ctrl-C stops it")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

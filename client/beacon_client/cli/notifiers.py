"""`beacon notifiers list|test|preview`."""

from __future__ import annotations

import sys

import click

from beacon_client.cli.common import TABLE_OR_JSON, connection_options, make_client, reporting


@click.group()
def notifiers() -> None:
    """Notifiers: create and list them, send a test message, preview the message."""


@notifiers.command("list")
@click.option("--type", "type_", help="Only notifiers of this type (chat_a, webhook, email, …).")
@TABLE_OR_JSON
@connection_options
def list_notifiers(type_: str | None, fmt: str, url: str, token: str | None) -> None:
    """Every notifier, newest first, with where it sends (never its secrets)."""
    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        found = list(client.iterate(client.list_notifiers, type=type_, limit=100))
    if fmt == "json":
        click.echo(as_json(found), nl=False)
        return
    rows = [[n.id, n.name, n.type, n.target, n.disabled_until] for n in found]
    click.echo(table(["id", "name", "type", "target", "disabled_until"], rows, empty="(no notifiers)"), nl=False)


@notifiers.command("create")
@click.option("--name", required=True, help="Unique among notifiers.")
@click.option("--type", "type_", required=True, help="chat_a, webhook, email, … (or a plugin's type).")
@click.option("--config", "pairs", multiple=True, help="KEY=VALUE of its config (a string); repeat for several.")
@click.option("--config-json", help="The whole config as a JSON object (for lists and numbers); --config adds to it.")
@click.option("--disabled-until", help="RFC 3339 or relative (now+1h): muted until then.")
@TABLE_OR_JSON
@connection_options
def create_notifier(
    name: str,
    type_: str,
    pairs: tuple[str, ...],
    config_json: str | None,
    disabled_until: str | None,
    fmt: str,
    url: str,
    token: str | None,
) -> None:
    """Create a notifier; prints its id. A signing secret Beacon generates (webhook) is printed on stderr, this once.

    e.g. --type webhook --config url=https://hooks.example.com/beacon, or --type email --config-json
    '{"addresses": ["ops@example.com"]}'."""
    import msgspec

    from beacon_client.cli.tables import as_json
    from beacon_client.cli.times import absolute

    config: dict[str, object] = {}
    if config_json is not None:
        try:
            config = msgspec.json.decode(config_json)
        except msgspec.DecodeError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--config-json") from None
        if not isinstance(config, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--config-json")
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--config")
        config[key] = value
    until = absolute(disabled_until, "--disabled-until")
    with reporting(url), make_client(url, token) as client:
        created = client.create_notifier(name, type_, config, disabled_until=until)
    if fmt == "json":  # the whole answer, the one-time secret included
        click.echo(as_json(created), nl=False)
        return
    click.echo(created.id)
    if created.signing_secret and created.signing_secret != config.get("signing_secret"):
        click.echo(f"signing secret (shown this once; keep it): {created.signing_secret}", err=True)


@notifiers.command("test")
@click.argument("notifier_id")
@TABLE_OR_JSON
@connection_options
def test_notifier(notifier_id: str, fmt: str, url: str, token: str | None) -> None:
    """Send a test message now; prints the delivery and each attempt. Exit status 1 when it did not succeed."""
    from beacon_client.cli.tables import as_json, table, text

    with reporting(url), make_client(url, token) as client:
        delivery = client.test_notifier(notifier_id)
    if fmt == "json":
        click.echo(as_json(delivery), nl=False)
    else:
        status = f" (HTTP {delivery.response_status})" if delivery.response_status else ""
        click.echo(f"delivery {delivery.id}: {delivery.status}{status}")
        if delivery.error:
            click.echo(f"error: {delivery.error}")
        rows = [[a.attempt, a.started_at, a.duration_ms, a.response_status, a.error] for a in delivery.attempt_log]
        if rows:
            click.echo(table(["attempt", "started_at", "ms", "status", "error"], rows), nl=False)
        if delivery.next_attempt_at:
            click.echo(f"next attempt at {text(delivery.next_attempt_at)}")
    if delivery.status != "succeeded":
        sys.exit(1)


@notifiers.command("preview")
@click.argument("notifier_id")
@click.option("--event", "event_json", help="JSON object overriding the test event's fields.")
@connection_options
def preview_notifier(notifier_id: str, event_json: str | None, url: str, token: str | None) -> None:
    """Render the message the notifier would send, without sending it (secrets masked); prints it as JSON."""
    import msgspec

    from beacon_client.cli.tables import as_json

    event = None
    if event_json is not None:
        try:
            event = msgspec.json.decode(event_json)
        except msgspec.DecodeError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--event") from None
        if not isinstance(event, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--event")
    with reporting(url), make_client(url, token) as client:
        preview = client.preview_notifier(notifier_id, event=event)
    click.echo(as_json(preview), nl=False)

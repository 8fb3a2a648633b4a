"""`beacon datasets list|fields`."""

from __future__ import annotations

import click

from beacon_client.cli.common import TABLE_OR_JSON, connection_options, make_client, reporting


@click.group()
def datasets() -> None:
    """Datasets: list them and their fields."""


@datasets.command("list")
@TABLE_OR_JSON
@connection_options
def list_datasets(fmt: str, url: str, token: str | None) -> None:
    """Every dataset the token may see."""
    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        found = list(client.iterate(client.list_datasets, limit=100))
    if fmt == "json":
        click.echo(as_json(found), nl=False)
        return
    rows = [[d.name, d.retention_days, d.created_at, d.description] for d in found]
    click.echo(table(["name", "retention_days", "created_at", "description"], rows, empty="(no datasets)"), nl=False)


@datasets.command("fields")
@click.argument("name")
@TABLE_OR_JSON
@connection_options
def list_fields(name: str, fmt: str, url: str, token: str | None) -> None:
    """The fields seen in a dataset and their JSON types (what a query can name)."""
    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        found = list(client.iterate(client.list_fields, name, limit=100))
    if fmt == "json":
        click.echo(as_json(found), nl=False)
        return
    rows = [[f.name, " ".join(f.types), f.first_seen] for f in found]
    click.echo(table(["field", "types", "first_seen"], rows, empty="(no fields yet)"), nl=False)

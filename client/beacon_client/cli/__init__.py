"""The client commands, talking HTTP to a Beacon: annotate, ingest, query here; export, monitors, notifiers,
datasets, alerts, silence and routing in their modules. `main` is the `beacon` command of the client installed
alone (`pip install ./client`); Beacon's own `beacon` (app/cli.py) adds them beside serve, migrate and tokens.

The service address is `--url` (`--server` on `annotate`, whose `--url` is the annotation's link) or
BEACON_URL; the token is `--token` or BEACON_TOKEN. Exit status 0 on success; on failure 1, with the error's
code, message and request id on stderr (2 for a usage error). Each retry of a request is a `warning:` line on
stderr while it waits.

Only click is imported at the top of these modules: each command imports the client when it runs, and nothing
of the server ever (tests/client/test_cli_imports.py).
"""

from __future__ import annotations

import sys

import click

from beacon_client.cli.common import format_option, make_client, reporting, say_warning, warn
from beacon_client.cli.common import server_option as _server_option
from beacon_client.cli.common import token_option as _token_option
from beacon_client.cli.datasets import datasets
from beacon_client.cli.exporting import export
from beacon_client.cli.monitors import monitors
from beacon_client.cli.notifiers import notifiers


@click.command()
@click.option("--type", "type_", required=True, help="Kind of marker, e.g. deploy, incident.")
@click.option("--title", required=True, help="Text shown on hover.")
@click.option("--dataset", "datasets", multiple=True, required=True, help="Repeat for several datasets.")
@click.option("--time", "time_", help="RFC 3339 or relative, e.g. now-5m (default: now).")
@click.option("--end-time", help="RFC 3339 or relative; draws a span from --time to --end-time.")
@click.option("--url", "link", help="Link opened from the marker (e.g. the CI job or release).")
@click.option("--description", help="Longer text.")
@click.option("--label", "labels", multiple=True, help="name=value; repeat. Alerts that carry them are told of it.")
@click.option("--strict", is_flag=True, help="Refuse (exit 1, nothing created) when a dataset does not exist.")
@_server_option("--server")
@_token_option
def annotate(
    type_: str,
    title: str,
    datasets: tuple[str, ...],
    time_: str | None,
    end_time: str | None,
    link: str | None,
    description: str | None,
    labels: tuple[str, ...],
    strict: bool,
    url: str,
    token: str | None,
) -> None:
    """Mark a deploy (or anything) on datasets' charts (`--dataset '*'`: every chart); prints the annotation id.

    A dataset that does not exist (yet) gets a warning on stderr; with --strict nothing is created."""
    from beacon_client.cli.annotating import check_datasets
    from beacon_client.cli.times import absolute

    start, end = absolute(time_, "--time"), absolute(end_time, "--end-time")
    label_map: dict[str, str] = {}
    for text in labels:  # the service checks the names and values
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{text!r} is not name=value", param_hint="--label")
        label_map[name.strip()] = value.strip()
    with reporting(url), make_client(url, token) as client:
        warning = check_datasets(client, [d for d in datasets if d != "*"], strict=strict)
        ann = client.create_annotation(
            type_,
            title,
            list(datasets),
            time=start,
            end_time=end,
            url=link,
            description=description,
            labels=label_map or None,
        )
    if warning:
        say_warning(warning)
    click.echo(ann.id)


@click.command()
@click.argument("source", type=click.Path(exists=True, allow_dash=True, dir_okay=False))
@click.option("--dataset", required=True)
@click.option("--timestamp-field", help="Field holding the event time (default _time).")
@click.option("--timestamp-format", help="Go reference-time layout, e.g. '02/Jan/2006:15:04:05 -0700'.")
@click.option("--max-failed", default=0, show_default=True, help="Events that may fail before the exit status is 1.")
@_server_option("--url", "--server")
@_token_option
def ingest(
    source: str,
    dataset: str,
    timestamp_field: str | None,
    timestamp_format: str | None,
    max_failed: int,
    url: str,
    token: str | None,
) -> None:
    """Send events from SOURCE (a file, or - for stdin): NDJSON or a JSON array, optionally gzip-compressed.

    Events go out as gzip NDJSON in batches of up to 10,000 events or 10 MB. On a terminal a progress bar shows
    the share read, events/s and the time left (from a pipe: the counts and the rate); a summary is printed at
    the end.
    """
    from beacon_client.cli.ingesting import run_ingest
    from beacon_client.cli.reading import IngestProgress, read_events

    with reporting(url), make_client(url, token) as client:
        code = run_ingest(
            client,
            read_events(source),
            dataset=dataset,
            timestamp_field=timestamp_field,
            timestamp_format=timestamp_format,
            max_failed=max_failed,
            progress=IngestProgress(enabled=sys.stderr.isatty()),
        )
    sys.exit(code)


@click.command()
@click.argument("apl")
@format_option("table", "json", "ndjson", "csv")
@click.option("--start-time", help="RFC 3339 or relative, e.g. now-1h.")
@click.option("--end-time", help="RFC 3339 or relative (default now).")
@click.option(
    "--take", type=click.IntRange(min=1), help="Row cap (default 1,000; the query's own take and 50,000 also apply)."
)
@_server_option("--url", "--server")
@_token_option
def query(
    apl: str,
    fmt: str,
    start_time: str | None,
    end_time: str | None,
    take: int | None,
    url: str,
    token: str | None,
) -> None:
    """Run an APL query (- reads it from stdin) and print the result.

    At most 1,000 rows unless --take says otherwise; when more matched, a note on stderr says so (`beacon export`
    streams every row).
    """
    from beacon_client.cli.output import render_rows

    text = sys.stdin.read() if apl == "-" else apl
    with reporting(url), make_client(url, token) as client:
        result = client.query(text, start_time=start_time, end_time=end_time, take=take)
    click.echo(render_rows(result, fmt), nl=False)
    warn(result.warnings)
    if result.status.truncated:
        # On stderr for every format, so that a pipe into jq or a CSV file is not taken for the whole answer.
        click.echo(
            f"note: only the first {len(result.rows):,} rows are shown; more rows matched. Raise --take "
            "(the service allows up to BEACON_QUERY_MAX_ROWS, 50,000 by default) or use `beacon export` for every row.",
            err=True,
        )


def register(group: click.Group) -> None:
    from beacon_client.cli import alerting

    for command in (annotate, ingest, query, export, monitors, notifiers, datasets):
        group.add_command(command)
    alerting.register(group)


@click.group()
def main() -> None:
    """Beacon's client: send events, query, mark deploys, manage monitors, notifiers and alerts over the API."""


register(main)

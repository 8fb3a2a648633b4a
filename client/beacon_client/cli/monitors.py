"""`beacon monitors list|get|create|evaluate|history`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from beacon_client.cli.common import TABLE_OR_JSON, connection_options, make_client, reporting, warn
from beacon_client.cli.durations import SECONDS

if TYPE_CHECKING:
    from beacon_client import Monitor

TYPES = ["threshold", "match_event"]
STATES = ["ok", "alerting", "no_data", "error"]
OPERATORS = ["above", "above_or_equal", "below", "below_or_equal"]


@click.group()
def monitors() -> None:
    """Monitors: list, show, create, evaluate now, and their history."""


def _condition(m: Monitor) -> str:
    from beacon_client.cli.tables import text

    if m.type != "threshold":
        return "each new event"
    return f"{(m.operator or '?').replace('_', ' ')} {text(m.threshold)}"


@monitors.command("list")
@click.option("--state", type=click.Choice(STATES), help="Only monitors in this state.")
@TABLE_OR_JSON
@connection_options
def list_monitors(state: str | None, fmt: str, url: str, token: str | None) -> None:
    """Every monitor, newest first: id, name, state, last value and condition."""
    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        found = list(client.iterate(client.list_monitors, state=state, limit=100))
    if fmt == "json":
        click.echo(as_json(found), nl=False)
        return
    rows = [[m.id, m.name, m.type, m.state, m.last_value, _condition(m), m.interval_seconds] for m in found]
    headers = ["id", "name", "type", "state", "last_value", "condition", "every_s"]
    click.echo(table(headers, rows, empty="(no monitors)"), nl=False)


def _details(m: Monitor) -> list[tuple[str, Any]]:
    pairs: list[tuple[str, Any]] = [
        ("id", m.id),
        ("name", m.name),
        ("type", m.type),
        ("dataset", m.dataset),
        ("apl", m.apl),
        ("state", m.state),
        ("last_value", m.last_value),
        ("last_error", m.last_error),
        ("condition", _condition(m)),
        ("interval_seconds", m.interval_seconds),
        ("range_seconds", m.range_seconds),
        ("delay_seconds", m.delay_seconds),
        ("trigger_after", f"{m.trigger_after.m} of {m.trigger_after.n} runs"),
        ("alert_on_no_data", m.alert_on_no_data),
        ("notify_by_group", m.notify_by_group),
        ("alerting_groups", m.alerting_groups),
        ("resolvable", m.resolvable),
        ("notifier_ids", " ".join(m.notifier_ids) or "- (routed by the routing tree)"),
        ("labels", " ".join(f"{k}={v}" for k, v in sorted(m.labels.items())) or None),
        ("description", m.description),
        ("disabled_until", m.disabled_until),
        ("last_evaluated_at", m.last_evaluated_at),
        ("next_evaluation_at", m.next_evaluation_at),
        ("created_at", m.created_at),
    ]
    return pairs


@monitors.command("get")
@click.argument("monitor_id")
@TABLE_OR_JSON
@connection_options
def get_monitor(monitor_id: str, fmt: str, url: str, token: str | None) -> None:
    """One monitor, every field."""
    from beacon_client.cli.tables import as_json, block

    with reporting(url), make_client(url, token) as client:
        m = client.get_monitor(monitor_id)
    click.echo(as_json(m) if fmt == "json" else block(_details(m)), nl=False)


def _labels(values: tuple[str, ...]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{item!r} is not name=value", param_hint="--label")
        labels[name] = value
    return labels


def _trigger_after(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    m, sep, n = value.partition("/")
    if not (sep and m.isdigit() and n.isdigit()):
        raise click.BadParameter(f"{value!r} is not M/N, e.g. 3/5", param_hint="--trigger-after")
    return int(m), int(n)


@monitors.command("create")
@click.option("--name", required=True)
@click.option("--apl", required=True, help="The query (- reads it from stdin).")
@click.option("--type", "type_", type=click.Choice(TYPES), default="threshold", show_default=True)
@click.option("--operator", type=click.Choice(OPERATORS), help="threshold: how the value compares with --threshold.")
@click.option("--threshold", type=float, help="threshold: the value that breaches.")
@click.option("--interval", type=SECONDS, help="How often it runs: 90, 90s, 5m, 1h (10 s to 1 day; default 60 s).")
@click.option("--range", "range_", type=SECONDS, help="The window each run queries (default: the interval).")
@click.option("--delay", type=SECONDS, help="How far behind now the window ends (late events; default 0).")
@click.option("--notifier", "notifier_ids", multiple=True, help="Notifier id; repeat for several (none: routed).")
@click.option("--label", "labels", multiple=True, help="name=value on its alerts; repeat for several.")
@click.option("--trigger-after", help="M/N: alert while M of the last N runs breached (default 1/1).")
@click.option("--alert-on-no-data", is_flag=True, default=None, help="No data is a state of its own that notifies.")
@click.option("--notify-by-group", is_flag=True, default=None, help="A state per group of the query's `by`.")
@click.option("--resolvable/--not-resolvable", default=None, help="Notify when it returns to ok (default yes).")
@click.option("--description")
@click.option("--disabled-until", help="RFC 3339 or relative (now+1h): no runs until then.")
@connection_options
def create_monitor(
    name: str,
    apl: str,
    type_: str,
    operator: str | None,
    threshold: float | None,
    interval: int | None,
    range_: int | None,
    delay: int | None,
    notifier_ids: tuple[str, ...],
    labels: tuple[str, ...],
    trigger_after: str | None,
    alert_on_no_data: bool | None,
    notify_by_group: bool | None,
    resolvable: bool | None,
    description: str | None,
    disabled_until: str | None,
    url: str,
    token: str | None,
) -> None:
    """Create a monitor; prints its id (the service checks the query and the fields, and says what is wrong;
    its warnings, such as a field the dataset never had, go to stderr)."""
    from beacon_client import TriggerAfter
    from beacon_client.cli.times import absolute

    after = _trigger_after(trigger_after)
    given: dict[str, Any] = {
        "operator": operator,
        "threshold": threshold,
        "interval_seconds": interval,
        "range_seconds": range_,
        "delay_seconds": delay,
        "alert_on_no_data": alert_on_no_data,
        "notify_by_group": notify_by_group,
        "resolvable": resolvable,
        "description": description,
        "disabled_until": absolute(disabled_until, "--disabled-until"),
        "trigger_after": TriggerAfter(m=after[0], n=after[1]) if after else None,
        "labels": _labels(labels) if labels else None,
    }
    fields = {k: v for k, v in given.items() if v is not None}
    text = sys.stdin.read() if apl == "-" else apl
    with reporting(url), make_client(url, token) as client:
        created = client.create_monitor(name, type_, text, notifier_ids=notifier_ids, **fields)
    click.echo(created.id)
    warn(created.warnings)


@monitors.command("evaluate")
@click.argument("monitor_id")
@click.option("--dry-run", is_flag=True, help="Report only: no state change, no history, no notification.")
@TABLE_OR_JSON
@connection_options
def evaluate_monitor(monitor_id: str, dry_run: bool, fmt: str, url: str, token: str | None) -> None:
    """Evaluate a monitor now and say what it found."""
    from beacon_client.cli.tables import as_json, block, table

    with reporting(url), make_client(url, token) as client:
        result = client.evaluate_monitor(monitor_id, dry_run=dry_run)
    if fmt == "json":
        click.echo(as_json(result), nl=False)
        return
    change = result.get("previous_state"), result.get("state")
    pairs: list[tuple[str, Any]] = [
        ("monitor", result.get("monitor_id")),
        ("dry_run", bool(result.get("dry_run"))),
        ("window", f"{result.get('start_time')} to {result.get('end_time')}"),
        ("state", change[1] if change[0] == change[1] else f"{change[0]} -> {change[1]}"),
        ("value", result.get("value")),
        ("error", result.get("error")),
        ("match_count", result.get("match_count")),
        ("events", " ".join(e.get("kind", "?") for e in result.get("events") or []) or None),
        ("notifiers", " ".join(result.get("notifier_ids") or []) or None),
    ]
    click.echo(block([p for p in pairs if p[1] is not None or p[0] in ("value", "state")]), nl=False)
    groups = result.get("groups") or []
    if any(g.get("group") for g in groups):  # a monitor without `by` groups has one group, {}
        rows = [[g.get("group"), g.get("state"), g.get("value")] for g in groups]
        click.echo("\n" + table(["group", "state", "value"], rows), nl=False)


@monitors.command("history")
@click.argument("monitor_id")
@click.option("--limit", type=click.IntRange(1, 10_000), default=25, show_default=True, help="Newest entries shown.")
@TABLE_OR_JSON
@connection_options
def monitor_history(monitor_id: str, limit: int, fmt: str, url: str, token: str | None) -> None:
    """The monitor's events (triggered, resolved, no_data, error, matched), newest first, with their deliveries."""
    from itertools import islice

    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        entries = list(islice(client.iterate(client.monitor_history, monitor_id, limit=min(limit, 100)), limit))
    if fmt == "json":
        click.echo(as_json(entries), nl=False)
        return
    rows = [
        [e.time, e.kind, e.state, e.value, e.threshold, e.group or None, e.match_count, " ".join(e.deliveries) or None]
        for e in entries
    ]
    headers = ["time", "kind", "state", "value", "threshold", "group", "matches", "deliveries"]
    click.echo(table(headers, rows, empty="(no history yet)"), nl=False)

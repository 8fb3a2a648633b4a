"""`beacon alerts`, `beacon silence add|list|expire` and `beacon routing show|test|import`: client commands over
/v1/alerts, /v1/silences and /v1/routing (the import's reading and printing: routing_import.py; the routing
document as text: routing_text.py).

Imports of the client and of the rendering helpers stay inside the commands, so that `beacon --help` (and every
other command) does not pay for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from beacon_client.cli.common import TABLE_OR_JSON, connection_options, format_option
from beacon_client.cli.durations import DURATION
from beacon_client.cli.routing_text import named, seconds, tree_text

if TYPE_CHECKING:
    from beacon_client import Alert, AlertGroup, Client, RoutingTest, Silence


def notifier_names(client: Client) -> dict[str, str]:
    """Notifier id -> name, to print names where the API answers ids (names are unique); {} for a token that may
    not read notifiers, which then sees the ids."""
    from beacon_client import BeaconAPIError

    try:
        return {n.id: n.name for n in client.iterate(client.list_notifiers, limit=100)}
    except BeaconAPIError as exc:
        if exc.status == 403:
            return {}
        raise


def _labels(labels: dict[str, str], leave_out: Sequence[str] = ()) -> str:
    from beacon_client.notation.labels import describe

    return describe({k: v for k, v in labels.items() if k not in leave_out})


def why(alert: Alert) -> str:
    """Why an alert is suppressed, in words (empty when it is not)."""
    parts = []
    if alert.silenced_by:
        parts.append("silenced by " + ", ".join(alert.silenced_by))
    if alert.inhibited_by:
        parts.append("inhibited by " + ", ".join(alert.inhibited_by))
    if alert.muted_by:
        parts.append("muted by " + ", ".join(alert.muted_by))
    return "; ".join(parts)


def _alert_rows(alerts: Sequence[Alert]) -> list[list[Any]]:
    return [
        [
            a.state,
            a.starts_at,
            a.labels.get("alertname", ""),
            _labels(a.labels, ("alertname",)),
            why(a),
            a.fingerprint,
        ]
        for a in alerts
    ]


ALERT_HEADER = ("STATE", "SINCE", "ALERT", "LABELS", "WHY", "FINGERPRINT")


def _groups_text(groups: Sequence[AlertGroup], names: dict[str, str]) -> str:
    from beacon_client.cli.tables import table

    if not groups:
        return "no alert groups\n"
    out = []
    for g in groups:
        notifiers = named(g.notifier_ids, names) or "no notifiers"
        muted = f"  muted by {', '.join(g.muted_by)}" if g.muted_by else ""
        out.append(f"{g.route} {_labels(g.labels)} → {notifiers}{muted}\n")
        out.append("".join("  " + line + "\n" for line in table(ALERT_HEADER, _alert_rows(g.alerts)).splitlines()))
    return "\n".join(out)


@click.command()
@click.option("--filter", "filters", multiple=True, help='A matcher such as team="payments"; repeat: all must hold.')
@click.option("--state", type=click.Choice(["firing", "suppressed", "resolved"]), help="Only alerts in this state.")
@click.option("--groups", is_flag=True, help="Show the groups the routing tree forms of them.")
@TABLE_OR_JSON
@connection_options
def alerts(filters: tuple[str, ...], state: str | None, groups: bool, fmt: str, url: str, token: str | None) -> None:
    """List alerts, newest first, with their state and why a suppressed one is (silence, inhibition, mute)."""
    from beacon_client.cli.common import make_client, reporting
    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        if groups:
            found_groups = client.alert_groups(filters=list(filters), state=state).data
            if fmt == "json":
                click.echo(as_json(found_groups), nl=False)
            else:
                click.echo(_groups_text(found_groups, notifier_names(client)), nl=False)
            return
        found = list(client.iterate(client.list_alerts, filters=list(filters), state=state, limit=100))
    shown = as_json(found) if fmt == "json" else table(ALERT_HEADER, _alert_rows(found), empty="no alerts")
    click.echo(shown, nl=False)


@click.group()
def silence() -> None:
    """Silences: add, list, expire."""


@silence.command("add")
@click.argument("matchers", nargs=-1, required=True)
@click.option(
    "--duration", type=DURATION, help="How long from the start, e.g. 30m, 2h, 1d, 1h30m [default 2h unless --ends-at]."
)
@click.option("--ends-at", help="RFC 3339 end instead of --duration.")
@click.option("--starts-at", help="RFC 3339 start (default now); before it the silence is pending.")
@click.option("--comment", required=True, help="Why (shown with the silence).")
@click.option("--created-by", help="Who (default: the token's id).")
@connection_options
def silence_add(
    matchers: tuple[str, ...],
    duration: timedelta | None,
    ends_at: str | None,
    starts_at: str | None,
    comment: str,
    created_by: str | None,
    url: str,
    token: str | None,
) -> None:
    """Silence the alerts that match every MATCHER (e.g. alertname=DiskFull 'instance=~"db-.*"'); prints its id."""
    import msgspec

    from beacon_client.cli.common import make_client, reporting

    if duration and ends_at:
        raise click.UsageError("give --duration or --ends-at, not both")
    start = _parse_time(starts_at, "--starts-at") if starts_at else None
    if ends_at:
        end = _parse_time(ends_at, "--ends-at")
    else:
        end = (start or datetime.now(UTC)) + (duration or timedelta(hours=2))
    with reporting(url), make_client(url, token) as client:
        created = client.create_silence(
            list(matchers),
            end,
            comment,
            starts_at=start if start is not None else msgspec.UNSET,
            created_by=created_by if created_by is not None else msgspec.UNSET,
        )
    click.echo(created.id)


def _parse_time(text: str, option: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise click.BadParameter(f"{text!r} is not an RFC 3339 time with an offset", param_hint=option)
    return value


def _silence_rows(found: Sequence[Silence]) -> list[list[Any]]:
    return [[s.id, s.state, s.starts_at, s.ends_at, ", ".join(s.matchers), s.created_by, s.comment] for s in found]


@silence.command("list")
@click.option("--state", type=click.Choice(["pending", "active", "expired"]), help="Only silences in this state.")
@TABLE_OR_JSON
@connection_options
def silence_list(state: str | None, fmt: str, url: str, token: str | None) -> None:
    """List silences, newest first."""
    from beacon_client.cli.common import make_client, reporting
    from beacon_client.cli.tables import as_json, table

    with reporting(url), make_client(url, token) as client:
        found = list(client.iterate(client.list_silences, state=state, limit=100))
    header = ("ID", "STATE", "STARTS", "ENDS", "MATCHERS", "CREATED BY", "COMMENT")
    shown = as_json(found) if fmt == "json" else table(header, _silence_rows(found), empty="no silences")
    click.echo(shown, nl=False)


@silence.command("expire")
@click.argument("silence_ids", nargs=-1, required=True)
@connection_options
def silence_expire(silence_ids: tuple[str, ...], url: str, token: str | None) -> None:
    """End silences now (they are kept, as expired)."""
    from beacon_client.cli.common import make_client, reporting
    from beacon_client.cli.tables import text

    with reporting(url), make_client(url, token) as client:
        for silence_id in silence_ids:
            done = client.expire_silence(silence_id)
            click.echo(f"{done.id} expired at {text(done.ends_at)}")


@click.group()
def routing() -> None:
    """The routing tree: show it, test labels against it, import an Alertmanager configuration."""


@routing.command("show")
@format_option("tree", "json")
@connection_options
def routing_show(fmt: str, url: str, token: str | None) -> None:
    """Print the routing document: as a readable tree, or as the JSON that `PUT /v1/routing` takes."""
    from beacon_client.cli.common import make_client, reporting
    from beacon_client.cli.tables import as_json

    with reporting(url), make_client(url, token) as client:
        doc = client.get_routing()
        if fmt == "json":  # ids: what `PUT /v1/routing` takes back
            click.echo(as_json({"version": doc.version, **doc.document()}), nl=False)
            return
        names = notifier_names(client)
    click.echo(tree_text(doc, names), nl=False)


def test_text(result: RoutingTest, names: dict[str, str] | None = None) -> str:
    names = names or {}
    out = [f"fingerprint {result.fingerprint}"]
    for r in result.routes:
        muted = f"  muted now by {', '.join(r.muted_by)}" if r.muted_by else ""
        notifiers = named(r.notifier_ids, names) or "no notifiers"
        out.append(f"{r.route} → {notifiers}{muted}")
        out.append(
            f"  group {r.group_key}  (wait {seconds(r.group_wait_seconds)}, interval "
            f"{seconds(r.group_interval_seconds)}, repeat {seconds(r.repeat_interval_seconds)})"
        )
    out.append("notifiers: " + (named(result.notifier_ids, names) or "none"))
    out.append("silenced: " + (f"yes, by {', '.join(result.silenced_by)}" if result.silenced else "no"))
    out.append("inhibited: " + (f"yes, by {', '.join(result.inhibited_by)}" if result.inhibited else "no"))
    muted = "yes, every route it takes" if result.muted else "some routes" if result.muted_by else "no"
    out.append("muted: " + muted + (f" ({', '.join(result.muted_by)})" if result.muted_by else ""))
    return "\n".join(out) + "\n"


@routing.command("test")
@click.argument("labels", nargs=-1, required=True)
@format_option("text", "json")
@connection_options
def routing_test(labels: tuple[str, ...], fmt: str, url: str, token: str | None) -> None:
    """Which routes, notifiers and group an alert with LABELS (name=value ...) would get now, and whether it would
    be silenced, inhibited or muted; nothing is sent."""
    from beacon_client.cli.common import make_client, reporting
    from beacon_client.cli.tables import as_json
    from beacon_client.notation.labels import parse_labels

    try:
        label_map = parse_labels(labels)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="LABELS") from None
    with reporting(url), make_client(url, token) as client:
        result = client.test_routing(label_map)
        names = notifier_names(client) if fmt == "text" else {}
    click.echo(as_json(result) if fmt == "json" else test_text(result, names), nl=False)


@routing.command("import")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--accept-losses", is_flag=True, help="Import even though some parts cannot be honoured (listed).")
@format_option("text", "json")
@connection_options
def routing_import(source: Path, dry_run: bool, accept_losses: bool, fmt: str, url: str, token: str | None) -> None:
    """Import an Alertmanager configuration (SOURCE, its alertmanager.yml) as notifiers and the routing document.

    Every part Beacon cannot honour is listed with its path in the YAML and why; the import is refused (exit 1,
    nothing changed) unless --accept-losses. Notifiers are found again by name, so importing the same file again
    changes nothing. Secrets in `*_file` fields are read here, relative to SOURCE, and stored sealed."""
    from beacon_client.cli.common import make_client, reporting
    from beacon_client.cli.routing_import import body_of, plan_text
    from beacon_client.cli.tables import as_json

    body, read = body_of(source)
    for where in read:
        click.echo(f"read the secret of {where}", err=True)
    with reporting(url), make_client(url, token) as client:
        result = client.import_routing(body, dry_run=dry_run, accept_losses=accept_losses)
    click.echo(as_json(result) if fmt == "json" else plan_text(result), nl=False)


def register(group: click.Group) -> None:
    for command in (alerts, silence, routing):
        group.add_command(command)

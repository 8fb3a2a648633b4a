"""`beacon routing import alertmanager.yml`: the secrets of `*_file` fields read here (relative to the YAML, as
Alertmanager reads them) and sent in the field they stand for, since the service reads no files for a request;
then the plan (or what was imported) as text.

The secrets read are sent to Beacon, which stores them sealed; they are never printed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from beacon_client import RoutingImport

# A `*_file` field of an integration -> the field it stands for (those whose secret Beacon keeps).
SECRET_FILES = {
    "url_file": "url",
    "api_url_file": "api_url",
    "webhook_url_file": "webhook_url",
    "routing_key_file": "routing_key",
    "service_key_file": "service_key",
    "api_key_file": "api_key",
}
GLOBAL_SECRET_FILES = {"slack_api_url_file": "slack_api_url", "opsgenie_api_key_file": "opsgenie_api_key"}


def _inline(node: dict[str, Any], fields: dict[str, str], base: Path, path: str, read: list[str]) -> None:
    for file_key, key in fields.items():
        name = node.get(file_key)
        if not isinstance(name, str) or not name:
            continue
        where = f"{path}.{file_key}"
        file = base / name  # absolute names stay absolute
        try:
            content = file.read_text(encoding="utf-8").strip()  # Alertmanager trims the file's whitespace too
        except (OSError, UnicodeDecodeError) as exc:
            raise click.ClickException(f"{where}: cannot read {file}: {exc}") from None
        del node[file_key]
        node[key] = content
        read.append(f"{where} ({file})")


def inline_secret_files(config: dict[str, Any], base: Path) -> list[str]:
    """Put the content of each `*_file` secret in the field it stands for; the fields read (`path (file)`)."""
    read: list[str] = []
    if isinstance(config.get("global"), dict):
        _inline(config["global"], GLOBAL_SECRET_FILES, base, "global", read)
    for i, receiver in enumerate(config.get("receivers") or []):
        if not isinstance(receiver, dict):
            continue
        for key, entries in receiver.items():
            if key.endswith("_configs") and isinstance(entries, list):
                for j, entry in enumerate(entries):
                    if isinstance(entry, dict):
                        _inline(entry, SECRET_FILES, base, f"receivers[{i}].{key}[{j}]", read)
    return read


def body_of(source: Path) -> tuple[bytes, list[str]]:
    """The YAML to send: as written, or (when it names secret files) re-written with their content."""
    import yaml

    raw = source.read_bytes()
    try:
        config = yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw, []  # the service says what is wrong with it, with line and column
    if not isinstance(config, dict):
        return raw, []
    read = inline_secret_files(config, source.resolve().parent)
    if not read:
        return raw, []
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True).encode(), read


def _display_document(result: RoutingImport) -> dict[str, Any]:
    """The document with notifier names where it has ids (`new:<name>` on a dry run), for reading."""
    names = {n.id: n.name for n in result.notifiers if n.id}

    def route(node: dict[str, Any]) -> dict[str, Any]:
        out = dict(node)
        if out.get("notifier_ids") is not None:
            out["notifier_ids"] = [names.get(i, i.removeprefix("new:")) for i in out["notifier_ids"]]
        out["routes"] = [route(child) for child in node.get("routes", [])]
        return out

    return {**result.document, "route": route(result.document["route"])}


def plan_text(result: RoutingImport) -> str:
    from beacon_client import Routing
    from beacon_client.cli.routing_text import seconds, tree_text
    from beacon_client.cli.tables import table

    if result.dry_run:
        head = "Dry run: nothing was changed. The import would do this:"
    elif result.applied:
        head = f"Imported: the routing document is at version {result.version}."
    else:
        head = f"Nothing to change: this configuration is imported already (routing version {result.version})."
    rows = [
        [n.action, n.name, n.type, n.target, "yes" if n.send_resolved else "no", n.source] for n in result.notifiers
    ]
    out = [head, "", "Notifiers (one per Alertmanager integration):"]
    out.append(table(["ACTION", "NAME", "TYPE", "TARGET", "SEND RESOLVED", "FROM"], rows, empty="(none)").rstrip())
    for n in result.notifiers:
        if n.signing_secret:
            out.append(f"signing secret of {n.name} (shown once): {n.signing_secret}")
    doc = _display_document(result)
    routing = Routing(
        version=result.version,
        route=doc["route"],
        inhibit_rules=doc["inhibit_rules"],
        time_intervals=doc["time_intervals"],
    )
    out += ["", "Routing document:", tree_text(routing).rstrip()]
    out.append(f"resolve timeout (global.resolve_timeout): {seconds(result.resolve_timeout_seconds)}")
    out += ["", f"Losses ({len(result.losses)}):" if result.losses else "Losses: none."]
    out += [f"  {loss.path}: {loss.reason}" for loss in result.losses]
    return "\n".join(out) + "\n"

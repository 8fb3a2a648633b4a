"""A whole configuration read: the notifiers it asks for (by name), the routing document naming them, the
resolve timeout, and the losses. Pure: nothing here looks at the database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.routing import document as d
from app.routing.importing import defaults as am
from app.routing.importing.losses import TEMPLATES, Loss, Losses
from app.routing.importing.receivers import DraftNotifier, Globals, read_receivers
from app.routing.importing.routes import RouteReader, read_inhibit_rules, read_time_intervals
from app.routing.importing.yamltext import bad, duration_ms, items, mapping

TOP_LEVEL = ("global", "route", "receivers", "inhibit_rules", "time_intervals", "mute_time_intervals", "templates")


@dataclass
class Draft:
    notifiers: list[DraftNotifier]
    document: d.Document  # notifier_ids hold notifier names until the plan gives ids
    resolve_timeout_seconds: int
    losses: list[Loss]


def read_config(config: dict[str, Any]) -> Draft:
    losses = Losses()
    for key in config:
        if key not in TOP_LEVEL:
            losses.unknown([key], "")
    g = Globals(mapping(config.get("global"), "global"))
    losses.unknown(sorted(set(g.data) - am.GLOBAL_FIELDS), "global")
    resolve_ms = am.RESOLVE_TIMEOUT_MS
    if g.data.get("resolve_timeout") is not None:
        resolve_ms = duration_ms(g.data["resolve_timeout"], "global.resolve_timeout")
        if resolve_ms <= 0:
            raise bad("global.resolve_timeout", "must be more than 0.")
    resolve_seconds = -(-resolve_ms // 1000)
    if resolve_ms % 1000:
        losses.add("global.resolve_timeout", f"becomes {resolve_seconds} s: Beacon's timers are whole seconds")
    for path, _ in items(config.get("templates"), "templates"):
        losses.add(path, TEMPLATES)
    receivers = read_receivers(config.get("receivers"), g, losses)
    intervals = read_time_intervals(config, losses)
    if config.get("route") is None:
        raise bad("route", "the configuration needs a root `route`.")
    route = RouteReader(receivers.names, {i.name for i in intervals}, losses).read(config["route"])
    rules = read_inhibit_rules(config.get("inhibit_rules"), losses)
    document = d.Document(route=route, inhibit_rules=rules, time_intervals=intervals)
    return Draft(receivers.notifiers, document, resolve_seconds, list(losses))

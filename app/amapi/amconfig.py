"""The routing document as an Alertmanager configuration (YAML), for `GET /api/v2/status`'s `config.original`:
amtool reads it for `config show`, `config routes` and `config routes test`, and Alertmanager's own loader
(`amtool check-config`) accepts it.

What it cannot say: receivers have no integrations (a notifier's settings hold secrets and stay in Beacon),
and a time range over midnight (Beacon's `22:00`-`07:00`) is shown as two ranges on the same days, since
Alertmanager's ranges end by 24:00.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from app.amapi.receivers import NO_RECEIVER, receiver_name
from app.routing import document as d


def _duration(seconds: int) -> str:
    # Alertmanager's model.Duration units; the largest whole one reads best (4h rather than 14400s).
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _route(raw: d.Route, names: Mapping[str, str], receivers: dict[str, None], root: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if raw.notifier_ids is not None or root:
        name = receiver_name(raw.notifier_ids or [], names)
        receivers[name] = None
        out["receiver"] = name
    if raw.group_by or (root and raw.group_by is not None):  # `[]` on a child inherits: said by leaving it out
        out["group_by"] = list(raw.group_by)
    if raw.matchers:
        out["matchers"] = list(raw.matchers)
    if raw.continue_:
        out["continue"] = True
    for field, key in (
        ("group_wait_seconds", "group_wait"),
        ("group_interval_seconds", "group_interval"),
        ("repeat_interval_seconds", "repeat_interval"),
    ):
        value = getattr(raw, field)
        if value is not None:
            out[key] = _duration(value)
    if raw.mute_time_intervals:
        out["mute_time_intervals"] = list(raw.mute_time_intervals)
    if raw.active_time_intervals:
        out["active_time_intervals"] = list(raw.active_time_intervals)
    if raw.routes:
        out["routes"] = [_route(child, names, receivers, False) for child in raw.routes]
    return out


def _minutes(text: str) -> int:
    hours, _, minutes = text.partition(":")  # checked when the document was stored
    return int(hours) * 60 + int(minutes)


def _times(ranges: list[d.TimeRange]) -> list[dict[str, str]]:
    out = []
    for r in ranges:
        if _minutes(r.end_time) < _minutes(r.start_time):  # over midnight
            out += [{"start_time": r.start_time, "end_time": "24:00"}, {"start_time": "00:00", "end_time": r.end_time}]
        else:
            out.append({"start_time": r.start_time, "end_time": r.end_time})
    return out


def _interval(raw: d.Interval) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if raw.times is not None:
        out["times"] = _times(raw.times)
    for key in ("weekdays", "days_of_month", "months", "years"):
        value = getattr(raw, key)
        if value is not None:
            out[key] = list(value)
    if raw.location is not None:
        out["location"] = raw.location
    return out


def alertmanager_config(doc: d.Document, names: Mapping[str, str]) -> dict[str, Any]:
    receivers: dict[str, None] = {}
    config: dict[str, Any] = {"global": {"resolve_timeout": _duration(doc.resolve_timeout_seconds)}}
    config["route"] = _route(doc.route, names, receivers, True)
    for name in names.values():  # every notifier is a receiver, as in GET /api/v2/receivers
        receivers.setdefault(name, None)
    config["receivers"] = [{"name": name} for name in receivers]
    if doc.inhibit_rules:
        config["inhibit_rules"] = [
            {"source_matchers": r.source_matchers, "target_matchers": r.target_matchers, "equal": r.equal}
            for r in doc.inhibit_rules
        ]
    if doc.time_intervals:
        config["time_intervals"] = [
            {"name": t.name, "time_intervals": [_interval(i) for i in t.intervals]} for t in doc.time_intervals
        ]
    return config


def receiver_names(doc: d.Document, names: Mapping[str, str]) -> list[str]:
    return [r["name"] for r in alertmanager_config(doc, names)["receivers"]] or [NO_RECEIVER]


def config_yaml(doc: d.Document, names: Mapping[str, str]) -> str:
    return yaml.safe_dump(alertmanager_config(doc, names), sort_keys=False, allow_unicode=True)

"""The routing document and its parts as text for people: the tree of `beacon routing show`, the timers in
`beacon routing test` and the plan of `beacon routing import`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beacon_client import Routing


def named(ids: Sequence[str], names: dict[str, str]) -> str:
    """Notifier ids as their names where known."""
    return ", ".join(names.get(i, i) for i in ids)


def seconds(value: int | None) -> str:
    if value is None:
        return "never"
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return f"{value}s"


TIMER_NAMES = (
    ("group_wait_seconds", "wait"),
    ("group_interval_seconds", "interval"),
    ("repeat_interval_seconds", "repeat"),
)
ROOT_DEFAULTS = {"group_wait_seconds": 30, "group_interval_seconds": 300, "repeat_interval_seconds": 14_400}


def _group_by(names: list[str] | None) -> str:
    if names == ["..."]:
        return "every label (one alert per group)"
    return ", ".join(names) if names else "nothing (one group)"


def tree_text(doc: Routing, names: dict[str, str] | None = None) -> str:
    """The tree as indented lines: each route's matchers, then what it sends where (notifiers by name, an id where
    the name is not known); a value the route does not set itself (inherited from its parent) is marked with `*`."""
    names = names or {}
    from beacon_client.cli.tables import as_json

    out = [f"routing version {doc.version}  (* inherited from the parent route)"]

    def walk(node: dict[str, Any], path: str, depth: int, parent: dict[str, Any]) -> None:
        pad = "  " * depth
        eff: dict[str, Any] = {}
        for name in ("notifier_ids", "group_by", *ROOT_DEFAULTS):
            own = node.get(name)
            eff[name] = own if own is not None else parent.get(name)
            eff[name + "*"] = "" if own is not None or depth == 0 else "*"
        head = path + (f"  {{{', '.join(node.get('matchers', []))}}}" if node.get("matchers") else "")
        if node.get("continue"):
            head += "  continue"
        out.append(pad + head)
        notifiers = named(eff["notifier_ids"] or [], names) or "no notifiers"
        group_by = _group_by(eff["group_by"])
        timers = ", ".join(f"{label} {seconds(eff[name])}{eff[name + '*']}" for name, label in TIMER_NAMES)
        out.append(f"{pad}  → {notifiers}{eff['notifier_ids*']}; group by {group_by}{eff['group_by*']}; {timers}")
        for kind, label in (("mute_time_intervals", "muted during"), ("active_time_intervals", "active only during")):
            if node.get(kind):
                out.append(f"{pad}  {label} {', '.join(node[kind])}")
        for i, child in enumerate(node.get("routes", [])):
            walk(child, f"{path}.routes[{i}]", depth + 1, eff)

    walk(doc.route, "route", 0, {"notifier_ids": [], "group_by": [], **ROOT_DEFAULTS})
    for i, rule in enumerate(doc.inhibit_rules):
        equal = f" with equal {', '.join(rule.get('equal', []))}" if rule.get("equal") else ""
        out.append(
            f"inhibit_rules[{i}]: {{{', '.join(rule.get('source_matchers', []))}}} firing mutes "
            f"{{{', '.join(rule.get('target_matchers', []))}}}{equal}"
        )
    for interval in doc.time_intervals:
        out.append(f"time interval {interval.get('name')}: {as_json(interval.get('intervals', [])).strip()}")
    return "\n".join(out) + "\n"

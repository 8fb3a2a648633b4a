"""Alertmanager's route tree, inhibit rules and time intervals as the parts of Beacon's routing document.

- `match`, `match_re` and `matchers` (several per line, as Alertmanager reads them) become one matcher list,
  sorted as Alertmanager sorts a route's matchers, so that group keys read as Alertmanager's do.
- `group_by: []` sets nothing (Alertmanager: the route inherits its parent's), `['...']` is every label.
- Timers are Go durations; Beacon's are whole seconds within its bounds (repeat_interval at least 60 s): a
  value that has to change is a loss saying what it becomes.
- `receiver` becomes the names of that receiver's notifiers (ids are given when the plan is made).
What Alertmanager refuses (matchers or `continue` on the root, an undefined receiver or time interval, a zero
group_interval) is a 400 naming the place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.routing import document as d
from app.routing.importing.losses import Fields, Losses
from app.routing.importing.yamltext import am_matchers, bad, duration_ms, flag, items, join, mapping, matcher, text
from app.routing.labels import is_label_name
from app.routing.matchers import Matcher
from app.routing.timeintervals import compile_interval
from app.routing.tree import MAX_DEPTH, TIMERS

_MATCH_TYPES = {"=": 0, "!=": 1, "=~": 2, "!~": 3}  # Alertmanager's order of matcher types
_TIMERS = (("group_wait", 0), ("group_interval", 1), ("repeat_interval", 1))  # (name, least Alertmanager takes)


def _sorted(found: list[Matcher]) -> list[str]:
    return [str(m) for m in sorted(found, key=lambda m: (m.name, m.value, _MATCH_TYPES[m.op]))]


def read_matchers(f: Fields, prefix: str = "") -> list[str]:
    """`<prefix>match`, `<prefix>match_re` and `<prefix>matchers` of a route (or an inhibit rule's side)."""
    found: list[Matcher] = []
    for op, key in (("=", f"{prefix}match"), ("=~", f"{prefix}match_re")):
        path = f.at(key)
        for name, value in mapping(f.take(key), path).items():
            found.append(matcher(name, op, text(value, join(path, name)), join(path, name)))
    for path, line in items(f.take(f"{prefix}matchers"), f.at(f"{prefix}matchers")):
        found.extend(am_matchers(text(line, path), path))
    return _sorted(found)


def _group_by(value: Any, path: str) -> list[str] | None:
    names = [text(v, p) for p, v in items(value, path)]
    if not names:
        return None  # Alertmanager: an empty list sets nothing, so the route inherits its parent's
    if "..." in names and len(names) > 1:
        raise bad(path, "`...` (every label) must be the only entry.")
    for i, name in enumerate(names):
        if name != "..." and not is_label_name(name):
            raise bad(f"{path}[{i}]", f"{name!r} is not a label name.")
    if len(set(names)) != len(names):
        raise bad(path, "a label is listed twice.")
    return names


def _timer(value: Any, path: str, name: str, least_ms: int, losses: Losses) -> int:
    ms = duration_ms(value, path)
    if ms < least_ms:
        raise bad(path, f"`{name}` cannot be zero (Alertmanager refuses it too).")
    minimum, _ = TIMERS[f"{name}_seconds"]
    seconds = -(-ms // 1000)
    why = "Beacon's timers are whole seconds" if ms % 1000 else ""
    if seconds < minimum:
        seconds, why = minimum, f"Beacon's shortest {name} is {minimum} s"
    elif seconds > d.MAX_TIMER_SECONDS:
        seconds, why = d.MAX_TIMER_SECONDS, f"Beacon's longest {name} is {d.MAX_TIMER_SECONDS // 86_400} days"
    if why:
        losses.add(path, f"{text(value, path)} becomes {seconds} s: {why}")
    return seconds


class RouteReader:
    def __init__(self, receivers: Mapping[str, list[str]], intervals: set[str], losses: Losses) -> None:
        self.receivers = receivers
        self.intervals = intervals
        self.losses = losses

    def read(self, value: Any, path: str = "route", depth: int = 0) -> d.Route:
        if depth > MAX_DEPTH:
            raise bad(path, f"the tree is nested deeper than {MAX_DEPTH} levels.")
        f = Fields(value, path)
        root = depth == 0
        route: dict[str, Any] = {"matchers": read_matchers(f)}
        receiver = f.take("receiver")
        if receiver is not None:
            name = text(receiver, f.at("receiver"))
            if name not in self.receivers:
                raise bad(f.at("receiver"), f"no receiver is named {name!r}.")
            route["notifier_ids"] = list(self.receivers[name])
        elif root:
            raise bad(path, "the root route needs a `receiver`.")
        group_by = _group_by(f.take("group_by"), f.at("group_by"))
        if group_by is not None:
            route["group_by"] = group_by
        for name, least_ms in _TIMERS:
            raw = f.take(name)
            if raw is not None:
                route[f"{name}_seconds"] = _timer(raw, f.at(name), name, least_ms, self.losses)
        if f.take("continue") is not None:
            route["continue_"] = flag(f.data["continue"], f.at("continue"))
        for kind in ("mute_time_intervals", "active_time_intervals"):
            names = [text(v, p) for p, v in items(f.take(kind), f.at(kind))]
            for i, name in enumerate(names):
                if name not in self.intervals:
                    raise bad(f"{f.at(kind)}[{i}]", f"no time interval is named {name!r}.")
            route[kind] = names
        if root:
            for key, set_ in (
                ("matchers", route["matchers"]),
                ("continue", route.get("continue_")),
                ("mute_time_intervals", route["mute_time_intervals"]),
                ("active_time_intervals", route["active_time_intervals"]),
            ):
                if set_:
                    raise bad(path, f"the root route cannot have {key} (Alertmanager refuses it too).")
        route["routes"] = [self.read(child, at, depth + 1) for at, child in items(f.take("routes"), f.at("routes"))]
        f.finish(self.losses)
        return d.Route(**route)


def read_inhibit_rules(value: Any, losses: Losses) -> list[d.InhibitRule]:
    rules = []
    for path, raw in items(value, "inhibit_rules"):
        f = Fields(raw, path)
        source, target = read_matchers(f, "source_"), read_matchers(f, "target_")
        equal = [text(v, p) for p, v in items(f.take("equal"), f.at("equal"))]
        for i, name in enumerate(equal):
            if not is_label_name(name):
                raise bad(f"{f.at('equal')}[{i}]", f"{name!r} is not a label name.")
        f.finish(losses)
        rules.append(d.InhibitRule(source_matchers=source, target_matchers=target, equal=equal))
    return rules


_INTERVAL_LISTS = ("weekdays", "days_of_month", "months", "years")


def _interval(value: Any, path: str, losses: Losses) -> d.Interval:
    f = Fields(value, path)
    fields: dict[str, Any] = {}
    times = f.take("times")
    if times is not None:
        fields["times"] = []
        for at, raw in items(times, f.at("times")):
            t = Fields(raw, at)
            start, end = t.take("start_time"), t.take("end_time")
            if start is None or end is None:
                raise bad(at, "a time range needs `start_time` and `end_time`.")
            t.finish(losses)
            fields["times"].append(
                d.TimeRange(start_time=text(start, join(at, "start_time")), end_time=text(end, join(at, "end_time")))
            )
    for key in _INTERVAL_LISTS:
        raw = f.take(key)
        if raw is not None:
            fields[key] = [text(v, p) for p, v in items(raw, f.at(key))]
    location = f.take("location")
    if location is not None:
        zone = text(location, f.at("location"))
        if zone == "Local":
            losses.add(
                f.at("location"),
                "`Local` is the Alertmanager machine's own zone, which Beacon cannot know: read as UTC",
            )
        else:
            fields["location"] = zone
    f.finish(losses)
    interval = d.Interval(**fields)
    compile_interval(interval, path)  # a 400 naming the place, as Beacon checks it
    return interval


def read_time_intervals(config: Mapping[str, Any], losses: Losses) -> list[d.TimeInterval]:
    """`time_intervals` and the older top-level `mute_time_intervals` (the same shape), names unique across both."""
    found: dict[str, d.TimeInterval] = {}
    for block in ("mute_time_intervals", "time_intervals"):
        for path, raw in items(config.get(block), block):
            f = Fields(raw, path)
            name = text(f.take("name"), f.at("name")) if f.data.get("name") is not None else ""
            if not name:
                raise bad(f.at("name"), "a time interval needs a name.")
            if name in found:
                raise bad(f.at("name"), f"two time intervals are named {name!r}.")
            at = f.at("time_intervals")
            intervals = [_interval(v, p, losses) for p, v in items(f.take("time_intervals"), at)]
            f.finish(losses)
            found[name] = d.TimeInterval(name=name, intervals=intervals)
    return list(found.values())

"""The routing tree: the document checked as a whole (errors name the exact place, `route.routes[1].matchers[0]`)
and compiled for matching.

An alert enters at the root and goes depth-first to the first child whose matchers all hold; a child with
`continue: true` lets it try the next siblings too. A node that no child takes handles the alert itself.
A child that does not set `notifier_ids`, `group_by`, a timer or `changes_window_seconds` inherits its parent's
(Alertmanager's rules).
A route is known by a key built from its matchers' path (`{}/{team="payments"}`), so inserting a sibling does
not rename the groups of the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

import msgspec

from app.errors import BeaconError
from app.routing import document as d
from app.routing.inhibition import InhibitRule, compile_rule
from app.routing.labels import Labels, is_label_name
from app.routing.matchers import Matcher, all_match, check_matchers
from app.routing.timeintervals import TimeInterval, compile_time_interval
from beacon_client.notation.labels import describe

MAX_DEPTH = 50
# name: (minimum, default at the root). Whole seconds, 1 s at least for the two that recur: a group is flushed
# by a database transaction and every message is a delivery row, so a sub-second cadence would be load, not
# news (docs/routing.md; Alertmanager's own tests repeat every second, which these floors allow).
TIMERS = {
    "group_wait_seconds": (0, d.DEFAULT_GROUP_WAIT),
    "group_interval_seconds": (1, d.DEFAULT_GROUP_INTERVAL),
    "repeat_interval_seconds": (1, d.DEFAULT_REPEAT_INTERVAL),
}


def _bad(param: str, message: str) -> BeaconError:
    return BeaconError("invalid_field", message, param=param)


@dataclass(frozen=True)
class Route:
    path: str  # where it is in the document: route, route.routes[0], ...
    key: str  # its identity in group keys
    matchers: tuple[Matcher, ...]
    notifier_ids: tuple[str, ...]
    group_by: tuple[str, ...] | None  # None: every label ("...")
    group_wait_seconds: int
    group_interval_seconds: int  # 0: a monitor's own route, flushed at each change of its alert
    repeat_interval_seconds: int | None  # None: never (a monitor's own route without a repeat interval)
    continue_: bool
    mute_time_intervals: tuple[str, ...]
    active_time_intervals: tuple[str, ...]
    routes: tuple[Route, ...] = ()
    monitor_id: str | None = None  # the implicit route of a monitor that names its own notifiers (routes.py)
    changes_window_seconds: int = d.DEFAULT_CHANGES_WINDOW

    def match(self, labels: Mapping[str, str]) -> list[Route]:
        """The routes that handle an alert with these labels (Alertmanager's Route.Match)."""
        if not all_match(self.matchers, labels):
            return []
        found: list[Route] = []
        for child in self.routes:
            taken = child.match(labels)
            found.extend(taken)
            if taken and not child.continue_:
                break
        return found or [self]

    def group_labels(self, labels: Mapping[str, str]) -> Labels:
        if self.group_by is None:
            return dict(labels)
        return {name: labels[name] for name in self.group_by if name in labels}

    def group_key(self, labels: Mapping[str, str]) -> str:
        return f"{self.key}:{describe(self.group_labels(labels))}"


@dataclass(frozen=True)
class Tree:
    root: Route
    inhibit_rules: tuple[InhibitRule, ...]
    time_intervals: Mapping[str, TimeInterval]
    document: d.Document
    by_key: Mapping[str, Route] = field(default_factory=dict)

    @property
    def resolve_timeout(self) -> timedelta:
        """How long an external alert posted without `ends_at` fires after its last post (Alertmanager's
        `global.resolve_timeout`)."""
        return timedelta(seconds=self.document.resolve_timeout_seconds)

    def match(self, labels: Mapping[str, str]) -> list[Route]:
        return self.root.match(labels)

    def muted_by(self, route: Route, now: datetime) -> list[str]:
        """The intervals that mute `route` at `now`: a mute interval holding now, or (outside every one of them)
        its active intervals."""
        muted = [
            n for n in route.mute_time_intervals if n in self.time_intervals and self.time_intervals[n].contains(now)
        ]
        if route.active_time_intervals and not any(
            self.time_intervals[n].contains(now) for n in route.active_time_intervals if n in self.time_intervals
        ):
            muted.extend(route.active_time_intervals)
        return muted

    def notifier_ids(self) -> set[str]:
        found: set[str] = set()
        stack = [self.root]
        while stack:
            route = stack.pop()
            found.update(route.notifier_ids)
            stack.extend(route.routes)
        return found


def _group_by(names: list[str], param: str) -> tuple[str, ...] | None:
    if "..." in names:
        if len(names) != 1:
            raise _bad(param, '`"..."` (every label) must be the only entry of `group_by`.')
        return None
    for i, name in enumerate(names):
        if not is_label_name(name):
            raise _bad(f"{param}[{i}]", f"{name!r} is not a label name.")
    return tuple(dict.fromkeys(names))


class _Compiler:
    def __init__(self, intervals: Mapping[str, TimeInterval], known_notifiers: set[str] | None) -> None:
        self.intervals = intervals
        self.known = known_notifiers
        self.count = 0
        self.by_key: dict[str, Route] = {}

    def route(self, raw: d.Route, path: str, parent: Route | None, key: str, depth: int) -> Route:
        self.count += 1
        if self.count > d.MAX_ROUTES:
            raise _bad(path, f"The tree holds more than {d.MAX_ROUTES} routes.")
        if depth > MAX_DEPTH:
            raise _bad(path, f"The tree is nested deeper than {MAX_DEPTH} levels.")
        if parent is None:
            for name, set_ in (
                ("matchers", raw.matchers),
                ("continue", raw.continue_),
                ("mute_time_intervals", raw.mute_time_intervals),
                ("active_time_intervals", raw.active_time_intervals),
            ):
                if set_:
                    raise _bad(f"{path}.{name}", f"The root route cannot have `{name}`: it takes every alert.")
        matchers = tuple(check_matchers(raw.matchers, f"{path}.matchers"))
        notifier_ids = raw.notifier_ids if raw.notifier_ids is not None else list(parent.notifier_ids if parent else [])
        if raw.notifier_ids is not None and self.known is not None:
            for i, notifier_id in enumerate(raw.notifier_ids):
                if notifier_id not in self.known:
                    raise _bad(f"{path}.notifier_ids[{i}]", f"Unknown notifier id {notifier_id!r}.")
        timers: dict[str, int] = {}
        for name, (minimum, default) in TIMERS.items():
            value = getattr(raw, name)
            if value is not None and not minimum <= value <= d.MAX_TIMER_SECONDS:
                raise _bad(f"{path}.{name}", f"`{name}` must be between {minimum} and {d.MAX_TIMER_SECONDS}.")
            inherited = getattr(parent, name) if parent else default
            timers[name] = value if value is not None else inherited
        window = raw.changes_window_seconds
        if window is not None and not 0 <= window <= d.MAX_CHANGES_WINDOW:
            raise _bad(
                f"{path}.changes_window_seconds",
                f"`changes_window_seconds` must be between 0 and {d.MAX_CHANGES_WINDOW}.",
            )
        if window is None:
            window = parent.changes_window_seconds if parent else d.DEFAULT_CHANGES_WINDOW
        for kind in ("mute_time_intervals", "active_time_intervals"):
            for i, name in enumerate(getattr(raw, kind)):
                if name not in self.intervals:
                    raise _bad(f"{path}.{kind}[{i}]", f"No time interval named {name!r} in `time_intervals`.")
        if raw.group_by:  # `[]` on a child inherits, as in Alertmanager (on the root: group by nothing)
            group_by = _group_by(raw.group_by, f"{path}.group_by")
        else:
            group_by = parent.group_by if parent else ()
        node = Route(
            path=path,
            key=key,
            matchers=matchers,
            notifier_ids=tuple(dict.fromkeys(notifier_ids)),
            group_by=group_by,
            continue_=raw.continue_,
            mute_time_intervals=tuple(raw.mute_time_intervals),
            active_time_intervals=tuple(raw.active_time_intervals),
            group_wait_seconds=timers["group_wait_seconds"],
            group_interval_seconds=timers["group_interval_seconds"],
            repeat_interval_seconds=timers["repeat_interval_seconds"],
            changes_window_seconds=window,
        )
        children = []
        seen: dict[str, int] = {}
        for i, child in enumerate(raw.routes):
            child_key = (
                f"{key}/{{{','.join(str(m) for m in check_matchers(child.matchers, f'{path}.routes[{i}].matchers'))}}}"
            )
            seen[child_key] = seen.get(child_key, 0) + 1
            if seen[child_key] > 1:  # identical siblings: told apart by their order among themselves
                child_key += f"#{seen[child_key]}"
            children.append(self.route(child, f"{path}.routes[{i}]", node, child_key, depth + 1))
        node = Route(**{**node.__dict__, "routes": tuple(children)})
        self.by_key[key] = node
        return node


def compile_document(doc: d.Document, known_notifiers: set[str] | None = None) -> Tree:
    """Check the whole document (a 400 naming the first problem's place) and compile it. `known_notifiers`:
    the notifier ids that exist (None: not checked)."""
    intervals: dict[str, TimeInterval] = {}
    for i, raw in enumerate(doc.time_intervals):
        if raw.name in intervals:
            raise _bad(f"time_intervals[{i}].name", f"Two time intervals are named {raw.name!r}.")
        intervals[raw.name] = compile_time_interval(raw, f"time_intervals[{i}]")
    compiler = _Compiler(intervals, known_notifiers)
    root = compiler.route(doc.route, "route", None, "{}", 0)
    rules = tuple(compile_rule(rule, f"inhibit_rules[{i}]") for i, rule in enumerate(doc.inhibit_rules))
    return Tree(root=root, inhibit_rules=rules, time_intervals=intervals, document=doc, by_key=compiler.by_key)


@lru_cache(maxsize=8)
def compiled(version: int, text: str) -> Tree:
    """The stored document of `version`, compiled once per process (it was checked when it was written)."""
    return compile_document(msgspec.json.decode(text, type=d.Document))

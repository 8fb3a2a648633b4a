"""Which routes an alert takes: the tree's, or the implicit route of a monitor that names its own notifiers.

Every place that asks who is, or will be, told of an alert asks here: the router placing alerts in groups, the
flush deciding whether a group is muted, and the views (alerts, groups, `POST /v1/routing/test`, `/api/v2`).

A monitor's own route is not in the routing document. Its groups are one alert each (`group_by: ["..."]`), it
has no group_wait and no group_interval (a change of its alert flushes its group at once: `interval 0`), and it
repeats on the monitor's `repeat_interval_seconds` (never without one). It is muted while every tree route its
labels take is muted (the mute timings of those routes still apply to it, as before the pipeline was one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from app.routing.tree import Route, Tree


def monitor_route(monitor_id: str, notifier_ids: Sequence[str], repeat_seconds: int | None) -> Route:
    key = f"monitor:{monitor_id}"
    return Route(
        path=key,
        key=key,
        matchers=(),
        notifier_ids=tuple(notifier_ids),
        group_by=None,
        group_wait_seconds=0,
        group_interval_seconds=0,
        repeat_interval_seconds=repeat_seconds,
        continue_=False,
        mute_time_intervals=(),
        active_time_intervals=(),
        monitor_id=monitor_id,
    )


@dataclass(frozen=True)
class Routes:
    tree: Tree
    monitors: Mapping[str, Route]  # monitor id -> its own route, for the monitors that name notifiers
    # The tree's routes of each label set asked about: a view asks for each alert's two or three times.
    _matched: dict[tuple[tuple[str, str], ...], list[Route]] = field(default_factory=dict, compare=False, repr=False)

    def match(self, labels: Mapping[str, str]) -> list[Route]:
        """`tree.match(labels)`, remembered."""
        key = tuple(labels.items())
        found = self._matched.get(key)
        if found is None:
            found = self._matched[key] = self.tree.match(labels)
        return found

    def of(self, labels: Mapping[str, str], monitor_id: str | None) -> list[Route]:
        """The routes of an alert with these labels; `monitor_id`: the monitor that raised it, if any."""
        own = self.monitors.get(monitor_id) if monitor_id is not None else None
        return [own] if own is not None else self.match(labels)

    def of_labels(self, labels: Mapping[str, str]) -> list[Route]:
        """`of` when only the labels are known (a monitor's alerts carry its `monitor_id` label)."""
        return self.of(labels, labels.get("monitor_id"))

    def muted_by(self, route: Route, labels: Mapping[str, str], now: datetime) -> list[str]:
        """The time intervals that mute `route` for an alert with these labels at `now` (empty: not muted)."""
        if route.monitor_id is None:
            return self.tree.muted_by(route, now)
        names: list[str] = []
        for taken in self.match(labels):
            found = self.tree.muted_by(taken, now)
            if not found:
                return []
            names.extend(n for n in found if n not in names)
        return names

    def notifier_ids(self, labels: Mapping[str, str], monitor_id: str | None) -> list[str]:
        found: list[str] = []
        for route in self.of(labels, monitor_id):
            found.extend(n for n in route.notifier_ids if n not in found)
        return found


async def load(conn: asyncpg.Connection, tree: Tree, monitor_ids: Sequence[str] | None = None) -> Routes:
    """The routes under `tree`, with the own routes of these monitors (None: of every monitor that names
    notifiers)."""
    if monitor_ids is not None and not monitor_ids:
        return Routes(tree, {})
    where = "" if monitor_ids is None else "WHERE m.id = ANY($1::text[])"
    rows = await conn.fetch(
        f"""
        SELECT m.id, m.repeat_interval_seconds AS repeat,
               array_agg(n.notifier_id ORDER BY n.position) AS notifier_ids
        FROM monitors m JOIN monitor_notifiers n ON n.monitor_id = m.id {where}
        GROUP BY m.id
        """,
        *([] if monitor_ids is None else [sorted(set(monitor_ids))]),
    )
    return Routes(tree, {r["id"]: monitor_route(r["id"], r["notifier_ids"], r["repeat"]) for r in rows})

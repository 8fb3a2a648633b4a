"""Reading alerts: each with its state and why it is suppressed, filtered by matchers and states; the groups the
tree forms of them now; and what the tree would do with a label set (`POST /v1/routing/test`).

A token limited to datasets sees only the alerts of monitors over those datasets; external alerts belong to
no dataset, so only unlimited tokens see them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from app.access import alert_clause
from app.auth import Principal
from app.pace import Pace
from app.routing.labels import Labels, fingerprint
from app.routing.matchers import Matcher, all_match
from app.routing.schemas import AlertGroupOut, AlertOut, AlertSource, RouteMatch, RoutingTestOut
from app.routing.suppression import Suppressor
from app.timefmt import iso_ms, iso_ms_or_none

SCAN_BATCH = 500
_COLUMNS = "fingerprint, labels, annotations, source, monitor_id, starts_at, ends_at, updated_at, generator_url"


@dataclass
class AlertFilter:
    matchers: list[Matcher] = field(default_factory=list)  # all must hold
    states: set[str] | None = None  # firing, suppressed, resolved; None: all
    silenced: bool | None = None  # False: leave silenced alerts out (likewise inhibited, muted)
    inhibited: bool | None = None
    muted: bool | None = None
    notifier_ids: set[str] | None = None  # only alerts the tree routes to one of these

    def keeps(self, out: AlertOut, notifiers: Iterable[str]) -> bool:
        if self.states is not None and out.state not in self.states:
            return False
        for wanted, reasons in ((self.silenced, out.silenced_by), (self.inhibited, out.inhibited_by)):
            if wanted is not None and wanted != bool(reasons):
                return False
        if self.muted is not None and self.muted != bool(out.muted_by):
            return False
        return self.notifier_ids is None or not self.notifier_ids.isdisjoint(notifiers)


def render(row: Mapping[str, Any], suppressor: Suppressor) -> AlertOut:
    now = suppressor.now
    firing = row["ends_at"] is None or row["ends_at"] > now
    labels = dict(sorted(row["labels"].items()))  # in this order everywhere, so its routes are found once
    verdict = suppressor.verdict(row["fingerprint"], labels, firing=firing)
    state = "resolved" if not firing else "suppressed" if verdict.suppressed else "firing"
    return AlertOut(
        fingerprint=row["fingerprint"],
        labels=labels,
        annotations=dict(sorted(row["annotations"].items())),
        state=state,
        starts_at=iso_ms(row["starts_at"]),
        ends_at=iso_ms_or_none(row["ends_at"]),
        updated_at=iso_ms(row["updated_at"]),
        source=AlertSource(type=row["source"], monitor_id=row["monitor_id"]),
        silenced_by=suppressor.shown(verdict.silenced_by),
        inhibited_by=suppressor.shown(verdict.inhibited_by),
        muted_by=verdict.muted_by,
        generator_url=row["generator_url"],
    )


async def scan(
    conn: asyncpg.Connection,
    who: Principal,
    suppressor: Suppressor,
    flt: AlertFilter,
    *,
    after: tuple[datetime, str] | None = None,
) -> AsyncGenerator[tuple[AlertOut, tuple[datetime, str]], None]:
    """Alerts newest first (by `starts_at`, then fingerprint) with their sort keys, filtered; read in batches.
    The event loop gets a turn every few ms of work, the caller's included (app/pace.py)."""
    visible, args = alert_clause(who, 1)
    cursor = after
    pace = Pace()
    while True:
        where, params = visible, list(args)
        if cursor is not None:
            n = len(params)
            where += f" AND (starts_at, fingerprint) < (${n + 1}, ${n + 2})"
            params += [cursor[0], cursor[1]]
        rows = await conn.fetch(
            f"SELECT {_COLUMNS} FROM alerts WHERE {where} ORDER BY starts_at DESC, fingerprint DESC LIMIT {SCAN_BATCH}",
            *params,
        )
        for row in rows:
            await pace.tick()
            cursor = (row["starts_at"], row["fingerprint"])
            if not all_match(flt.matchers, row["labels"]):
                continue
            out = render(row, suppressor)
            notifiers = (
                notifiers_of(suppressor, row["labels"], row["monitor_id"]) if flt.notifier_ids is not None else ()
            )
            if flt.keeps(out, notifiers):
                yield out, cursor
        if len(rows) < SCAN_BATCH:
            return


def notifiers_of(suppressor: Suppressor, labels: Mapping[str, str], monitor_id: str | None) -> list[str]:
    """Who is told of an alert: the notifiers of the routes it takes (routes.py: a monitor with notifiers of its
    own tells only those)."""
    return suppressor.routes.notifier_ids(labels, monitor_id)


async def one(conn: asyncpg.Connection, who: Principal, suppressor: Suppressor, fp: str) -> AlertOut | None:
    visible, args = alert_clause(who, 2)
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM alerts WHERE fingerprint = $1 AND {visible}", fp, *args)
    return None if row is None else render(row, suppressor)


async def alert_names(conn: asyncpg.Connection, who: Principal, fingerprints: Iterable[str]) -> dict[str, str]:
    """The alertname (else the fingerprint) of each of these alerts that `who` may see, in one query."""
    visible, args = alert_clause(who, 2)
    rows = await conn.fetch(
        "SELECT fingerprint, labels->>'alertname' AS name FROM alerts"
        f" WHERE fingerprint = ANY($1::text[]) AND {visible}",
        sorted(set(fingerprints)),
        *args,
    )
    return {r["fingerprint"]: r["name"] or r["fingerprint"] for r in rows}


async def groups(
    conn: asyncpg.Connection, who: Principal, suppressor: Suppressor, flt: AlertFilter
) -> list[AlertGroupOut]:
    """The groups the tree forms now of the alerts that pass `flt` (resolved ones only when asked for)."""
    found: dict[str, AlertGroupOut] = {}
    wanted = flt if flt.states is not None else AlertFilter(**{**flt.__dict__, "states": {"firing", "suppressed"}})
    async for out, _ in scan(conn, who, suppressor, wanted):
        for route in suppressor.routes.of(out.labels, out.source.monitor_id):
            key = route.group_key(out.labels)
            group = found.get(key)
            if group is None:
                group = found[key] = AlertGroupOut(
                    group_key=key,
                    route=route.path,
                    labels=route.group_labels(out.labels),
                    notifier_ids=list(route.notifier_ids),
                    muted_by=suppressor.routes.muted_by(route, out.labels, suppressor.now),
                    alerts=[],
                    changes_window_seconds=route.changes_window_seconds,
                )
            group.alerts.append(out)
    return sorted(found.values(), key=lambda g: g.group_key)


def test_labels(suppressor: Suppressor, labels: Labels) -> RoutingTestOut:
    fp = fingerprint(labels)
    routes = suppressor.routes.of_labels(labels)
    verdict = suppressor.verdict(fp, labels)
    matches = [
        RouteMatch(
            route=r.path,
            route_key=r.key,
            notifier_ids=list(r.notifier_ids),
            group_by=["..."] if r.group_by is None else list(r.group_by),
            group_key=r.group_key(labels),
            group_labels=r.group_labels(labels),
            group_wait_seconds=r.group_wait_seconds,
            group_interval_seconds=r.group_interval_seconds,
            repeat_interval_seconds=r.repeat_interval_seconds,
            muted_by=suppressor.routes.muted_by(r, labels, suppressor.now),
            changes_window_seconds=r.changes_window_seconds,
        )
        for r in routes
    ]
    # A test is a question about labels the viewer typed: it learns of no alert or silence it may not see.
    silenced_by, inhibited_by = suppressor.shown(verdict.silenced_by), suppressor.shown(verdict.inhibited_by)
    return RoutingTestOut(
        fingerprint=fp,
        routes=matches,
        notifier_ids=suppressor.routes.notifier_ids(labels, labels.get("monitor_id")),
        silenced_by=silenced_by,
        inhibited_by=inhibited_by,
        muted_by=verdict.muted_by,
        silenced=bool(silenced_by),
        inhibited=bool(inhibited_by),
        muted=verdict.all_routes_muted,
    )

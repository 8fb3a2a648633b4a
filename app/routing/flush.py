"""Flushing due groups: the driver of the pipeline's flush (app/routing/pipeline.py holds its stages).

Due groups are claimed with `FOR UPDATE SKIP LOCKED`; each is read with its alerts, the notification log and
what its notifiers want (`send_resolved`), flushed by `pipeline.flush_group`, and what that decided is written
in the claiming transaction: the deliveries (outbox), the log, the group's next flush, the alerts that leave it.
So each message is queued once across processes and restarts, and a process that dies before its commit leaves
the group due for another.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg
import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import ROUTED_GROUP_AUDIENCE, monitor_message_audience
from app.annotations.changes import Wanted, related_changes_many
from app.deliveries.service import Queued, enqueue_many
from app.routing.env import RoutingEnv
from app.routing.messages import EventInfo, Member, MonitorFacts, MonitorInfo, concerned, event_for
from app.routing.pipeline import LogEntry, Notification, Reason, Receiver, flush_group, next_flush
from app.routing.routes import Routes, monitor_route
from app.routing.suppression import Suppressor
from app.routing.tree import Route

FLUSH_BATCH = 250  # groups claimed and flushed per transaction (a fan-out of 1,000 new groups: 4 commits)


@dataclass
class Flushed:
    groups: int = 0
    closed: int = 0
    sent: list[tuple[str, str, Reason]] = field(default_factory=list)  # (group key, notifier id, reason)


def _route_of(group: Mapping[str, Any], routes: Routes) -> Route:
    """The group's route as the document (or its monitor) has it now, or as it was when the group formed."""
    if group["monitor_id"] is not None:
        own = routes.monitors.get(group["monitor_id"])
        if own is not None:
            return own
        return monitor_route(group["monitor_id"], group["notifier_ids"], group["repeat_interval_seconds"])
    found = routes.tree.by_key.get(group["route_key"])
    if found is not None:
        return found
    return Route(
        path=group["route_path"],
        key=group["route_key"],
        matchers=(),
        notifier_ids=tuple(group["notifier_ids"]),
        group_by=(),
        group_wait_seconds=group["group_wait_seconds"],
        group_interval_seconds=group["group_interval_seconds"],
        repeat_interval_seconds=group["repeat_interval_seconds"],
        continue_=False,
        mute_time_intervals=tuple(group["mute_time_intervals"]),
        active_time_intervals=tuple(group["active_time_intervals"]),
    )


Logs = dict[str, dict[str, LogEntry]]  # group key -> notifier id -> what it was last told


_LABELS = msgspec.json.Decoder(dict[str, str])


async def _load(conn: asyncpg.Connection, keys: list[str]) -> tuple[dict[str, list[Member]], Logs]:
    members: dict[str, list[Member]] = {k: [] for k in keys}
    rows = await conn.fetch(
        """
        SELECT m.group_key, a.fingerprint, a.labels::text AS labels, a.annotations::text AS annotations,
               a.starts_at, a.ends_at, a.generator_url, a.monitor_id, a.monitor_event_id, e.kind AS event_kind
        FROM alert_group_members m JOIN alerts a ON a.fingerprint = m.fingerprint
        LEFT JOIN monitor_events e ON e.id = a.monitor_event_id
        WHERE m.group_key = ANY($1::text[])
        """,
        keys,
    )
    for row in rows:  # label sets as text, decoded by msgspec: 10,000 of them take json.loads 0.5 s
        members[row["group_key"]].append(
            Member(
                row["fingerprint"],
                _LABELS.decode(row["labels"]),
                _LABELS.decode(row["annotations"]),
                row["starts_at"],
                row["ends_at"],
                row["generator_url"],
                row["monitor_id"],
                row["monitor_event_id"],
                row["event_kind"],
            )
        )
    logs: Logs = {k: {} for k in keys}
    for row in await conn.fetch(
        "SELECT group_key, notifier_id, firing, resolved, sent_at FROM alert_notification_log "
        "WHERE group_key = ANY($1::text[])",
        keys,
    ):
        logs[row["group_key"]][row["notifier_id"]] = LogEntry(
            frozenset(row["firing"]), frozenset(row["resolved"]), row["sent_at"]
        )
    return members, logs


class _Writes:
    """What one batch writes back, in a few statements."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, str, list[str], list[str], datetime]] = []  # SetNotifiesStage's entries
        self.gone: list[tuple[str, str]] = []  # (group, fingerprint) memberships that end
        self.next: list[tuple[str, datetime, bool]] = []  # (group, next flush, flushed now)
        self.closed: list[str] = []
        self.event_deliveries: list[tuple[str, str]] = []  # (monitor event, delivery) for the monitor's history

    async def apply(self, conn: asyncpg.Connection, now: datetime) -> None:
        if self.logs:
            await conn.execute(
                """
                INSERT INTO alert_notification_log (group_key, notifier_id, firing, resolved, sent_at)
                SELECT k, n, ARRAY(SELECT jsonb_array_elements_text(f::jsonb)),
                       ARRAY(SELECT jsonb_array_elements_text(r::jsonb)), t
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS i(k, n, f, r, t)
                ON CONFLICT (group_key, notifier_id) DO UPDATE
                SET firing = EXCLUDED.firing, resolved = EXCLUDED.resolved, sent_at = EXCLUDED.sent_at
                """,
                *(
                    list(col)
                    for col in zip(*[(k, n, _json(f), _json(r), t) for k, n, f, r, t in self.logs], strict=True)
                ),
            )
        if self.event_deliveries:
            await conn.execute(
                """
                UPDATE monitor_events e SET delivery_ids = e.delivery_ids || i.ids
                FROM (SELECT ev, array_agg(d ORDER BY d) AS ids FROM unnest($1::text[], $2::text[]) AS u(ev, d)
                      GROUP BY ev) i
                WHERE e.id = i.ev
                """,
                [e for e, _ in self.event_deliveries],
                [d for _, d in self.event_deliveries],
            )
        if self.gone:
            await conn.execute(
                """
                DELETE FROM alert_group_members m USING unnest($1::text[], $2::text[]) AS i(k, f)
                WHERE m.group_key = i.k AND m.fingerprint = i.f
                """,
                [k for k, _ in self.gone],
                [f for _, f in self.gone],
            )
        if self.next:
            await conn.execute(
                """
                UPDATE alert_groups g SET next_flush_at = i.n, flushed_at = CASE WHEN i.f THEN $4 ELSE g.flushed_at END
                FROM unnest($1::text[], $2::timestamptz[], $3::boolean[]) AS i(k, n, f) WHERE g.key = i.k
                """,
                [k for k, _, _ in self.next],
                [n for _, n, _ in self.next],
                [f for _, _, f in self.next],
                now,
            )
        if self.closed:
            await conn.execute("DELETE FROM alert_groups WHERE key = ANY($1::text[])", self.closed)
            await conn.execute("DELETE FROM alert_group_members WHERE group_key = ANY($1::text[])", self.closed)
            await conn.execute("DELETE FROM alert_notification_log WHERE group_key = ANY($1::text[])", self.closed)


def _json(values: Sequence[str] | set[str]) -> str:
    return msgspec.json.encode(sorted(values)).decode()


async def _receivers(conn: asyncpg.Connection, groups: Sequence[Mapping[str, Any]]) -> dict[str, Receiver]:
    """Each notifier's `send_resolved`."""
    ids = sorted({n for g in groups for n in g["notifier_ids"]})
    rows = await conn.fetch("SELECT id, send_resolved FROM notifiers WHERE id = ANY($1::text[])", ids)
    return {r["id"]: Receiver(r["id"], r["send_resolved"]) for r in rows}


_EVENT = msgspec.json.Decoder(tuple[dict[str, Any], list[dict[str, Any]]])


async def _monitor_facts(
    conn: asyncpg.Connection, groups: Sequence[Mapping[str, Any]], members: Mapping[str, list[Member]]
) -> dict[str, MonitorFacts]:
    """For each monitor's own group: its monitor and the event its alert last changed with."""
    own = [g for g in groups if g["monitor_id"] is not None]
    if not own:
        return {}
    rows = await conn.fetch(
        "SELECT id, name, description, threshold, operator, apl FROM monitors WHERE id = ANY($1::text[])",
        sorted({g["monitor_id"] for g in own}),
    )
    monitors = {
        r["id"]: MonitorInfo(r["name"], r["description"], r["threshold"], r["operator"], r["apl"]) for r in rows
    }
    events: dict[str, EventInfo] = {}
    event_ids = sorted({m.monitor_event_id for g in own for m in members[g["key"]] if m.monitor_event_id})
    for r in await conn.fetch(
        """
        SELECT id, kind, state, time, value, start_time, end_time, match_count, error,
               jsonb_build_array(group_values, matches)::text AS json
        FROM monitor_events WHERE id = ANY($1::text[])
        """,
        event_ids,
    ):
        group, matches = _EVENT.decode(r["json"])
        events[r["id"]] = EventInfo(
            r["id"], r["kind"], r["state"], r["time"], r["value"], r["start_time"], r["end_time"], group, matches,
            r["match_count"], r["error"],
        )  # fmt: skip
    found = {}
    for g in own:
        event_id = next((m.monitor_event_id for m in members[g["key"]]), None)
        found[g["key"]] = MonitorFacts(monitors.get(g["monitor_id"]), events.get(event_id) if event_id else None)
    return found


async def flush_batch(
    session: AsyncSession,
    conn: asyncpg.Connection,
    env: RoutingEnv,
    suppression: Callable[[], Awaitable[Suppressor]],
    now: datetime,
    *,
    limit: int = FLUSH_BATCH,
) -> Flushed | None:
    """Claim up to `limit` due groups and flush them in the caller's transaction; None when none is due.
    `suppression` is asked only when there is something to flush (it may read every firing alert)."""
    groups = await conn.fetch(
        "SELECT * FROM alert_groups WHERE next_flush_at <= $1 ORDER BY next_flush_at LIMIT $2 FOR UPDATE SKIP LOCKED",
        now,
        limit,
    )
    if not groups:
        return None
    suppressor = await suppression()
    routes = suppressor.routes
    members, logs = await _load(conn, [g["key"] for g in groups])
    receivers = await _receivers(conn, groups)
    facts = await _monitor_facts(conn, groups, members)
    writes, flushed = _Writes(), Flushed(groups=len(groups))
    sends: list[_Send] = []
    for group in groups:
        key = group["key"]
        route = _route_of(group, routes)
        at = min(group["next_flush_at"], now)
        outcome = flush_group(suppressor, routes, route, members[key], logs[key], receivers, now, at)
        for n in outcome.notifications:
            if n.send:
                sends.append(_Send(group, route, n, facts.get(key)))
                flushed.sent.append((key, n.notifier_id, n.reason))
        writes.logs.extend((key, n, f, r, at) for n, f, r in outcome.log)
        writes.gone.extend((key, fp) for fp in outcome.gone)
        if outcome.closed:
            writes.closed.append(key)
        else:
            flushed_now = not outcome.muted_by
            writes.next.append((key, next_flush(route, group["next_flush_at"], now, at, outcome), flushed_now))
    queued = await _messages(conn, env, sends, now)
    ids = await enqueue_many(conn, env.delivery, queued)
    # A monitor's own message is listed in the history of the monitor event it reports.
    writes.event_deliveries = [(q.monitor_event_id, i) for q, i in zip(queued, ids, strict=True) if q.monitor_event_id]
    await writes.apply(conn, now)
    flushed.closed = len(writes.closed)
    return flushed


@dataclass(frozen=True)
class _Send:
    """A notification the flush sends: its group, route, what it lists, and its monitor when the group is one."""

    group: Mapping[str, Any]
    route: Route
    notification: Notification
    facts: MonitorFacts | None


async def _messages(conn: asyncpg.Connection, env: RoutingEnv, sends: Sequence[_Send], now: datetime) -> list[Queued]:
    """The messages of a batch's notifications, with what changed before each (one lookup for them all)."""
    found = await related_changes_many(conn, [_wanted(s) for s in sends], now=now) if sends else []
    queued = []
    for s, changes in zip(sends, found, strict=True):
        group, n = s.group, s.notification
        event = event_for(
            key=group["key"],
            reason=n.reason,
            group_labels=group["labels"],
            firing=n.firing,
            resolved=n.resolved,
            now=now,
            link=env.link,
            monitor=s.facts,
            changes=changes,
        )
        listed = [*n.firing, *n.resolved]
        queued.append(
            Queued(
                notifier_id=n.notifier_id,
                event=event,
                monitor_id=group["monitor_id"],
                monitor_event_id=event.monitor_event_id if s.facts is not None else None,
                alert_group_key=group["key"],
                alert_group_reason=n.reason,
                monitor_ids=sorted({a.monitor_id for a in listed if a.monitor_id}) or None,
            )
        )
    return queued


def _wanted(send: _Send) -> Wanted:
    """What a message may say changed (app/access.py): a routed group's tells its route's window of every dataset;
    a monitor's own, what a token limited to its dataset sees, over the windows of the routes its labels take."""
    n, alerts = send.notification, concerned(send.notification.firing, send.notification.resolved)
    if send.facts is None:
        return Wanted(alerts, send.route.changes_window_seconds, ROUTED_GROUP_AUDIENCE)
    dataset = next((a.labels.get("dataset") for a in (*n.firing, *n.resolved)), None) or ""
    return Wanted(alerts, None, monitor_message_audience(dataset))

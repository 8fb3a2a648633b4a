"""Group flushes: what each (group, notifier) is told, and when (Alertmanager's timers and dedup rules).

A new group is flushed `group_wait` after it was formed, then every `group_interval`. At each flush, per
notifier, the notification log says which alerts it last heard of as firing; it is sent a message when
- it never heard of the group and alerts fire (`first`; an alert that resolved within group_wait is not sent),
- an alert fires that it did not hear of (`new_alerts`),
- an alert it heard of as firing has resolved (`resolved`; when none fires any more, the group then closes),
- nothing changed, alerts fire and `repeat_interval` has passed since its last message (`repeat`).
Silenced and inhibited alerts are left out of what is sent; a muted route sends nothing and changes nothing
until the mute ends (so a resolve during the night is still reported in the morning, unlike Alertmanager).

Due groups are claimed with `FOR UPDATE SKIP LOCKED`; the deliveries (outbox), the log and the group's next
flush are written in the claiming transaction, so each message is queued once across processes and restarts,
and a process that dies before its commit leaves the group due for another.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import asyncpg
import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.base import GroupAlert
from app.access import ROUTED_GROUP_AUDIENCE
from app.annotations.changes import related_changes
from app.deliveries.service import enqueue
from app.routing.env import RoutingEnv
from app.routing.messages import Member, alert_item, concerned, group_event
from app.routing.suppression import Suppressor
from app.routing.tree import Route

Reason = Literal["first", "new_alerts", "resolved", "repeat"]
FLUSH_BATCH = 50  # groups claimed and flushed per transaction


@dataclass(frozen=True)
class LogEntry:
    firing: frozenset[str]
    resolved: frozenset[str]
    sent_at: datetime


def decide(
    entry: LogEntry | None, firing: set[str], resolved: set[str], now: datetime, repeat_seconds: int
) -> tuple[Reason | None, set[str]]:
    """Whether a notifier must be told now, why, and which resolved alerts to tell it of (those it heard fire)."""
    if entry is None:
        return ("first" if firing else None), set()
    told = resolved & entry.firing
    if not firing <= entry.firing:
        return "new_alerts", told
    if told:
        return "resolved", told
    if firing and now - entry.sent_at >= timedelta(seconds=repeat_seconds):
        return "repeat", set()
    return None, set()


@dataclass
class Flushed:
    groups: int = 0
    closed: int = 0
    sent: list[tuple[str, str, Reason]] = field(default_factory=list)  # (group key, notifier id, reason)


def _route_of(group: Mapping[str, Any], routes: Mapping[str, Route]) -> Route:
    """The group's route as the document has it now, or as it was when the group formed (route since removed)."""
    found = routes.get(group["route_key"])
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
               a.starts_at, a.ends_at, a.generator_url
        FROM alert_group_members m JOIN alerts a ON a.fingerprint = m.fingerprint
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
        self.logs: list[tuple[str, str, list[str], list[str]]] = []
        self.gone: list[tuple[str, str]] = []  # (group, fingerprint) memberships that end
        self.next: list[tuple[str, datetime, bool]] = []  # (group, next flush, flushed now)
        self.closed: list[str] = []

    async def apply(self, conn: asyncpg.Connection, now: datetime) -> None:
        if self.logs:
            await conn.execute(
                """
                INSERT INTO alert_notification_log (group_key, notifier_id, firing, resolved, sent_at)
                SELECT k, n, ARRAY(SELECT jsonb_array_elements_text(f::jsonb)),
                       ARRAY(SELECT jsonb_array_elements_text(r::jsonb)), $5
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS i(k, n, f, r)
                ON CONFLICT (group_key, notifier_id) DO UPDATE
                SET firing = EXCLUDED.firing, resolved = EXCLUDED.resolved, sent_at = EXCLUDED.sent_at
                """,
                *(list(col) for col in zip(*[(k, n, _json(f), _json(r)) for k, n, f, r in self.logs], strict=True)),
                now,
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
    members, logs = await _load(conn, [g["key"] for g in groups])
    writes, flushed = _Writes(), Flushed(groups=len(groups))
    for group in groups:
        await _flush_one(
            session, conn, env, suppressor, group, members[group["key"]], logs[group["key"]], now, writes, flushed
        )
    await writes.apply(conn, now)
    flushed.closed = len(writes.closed)
    return flushed


async def _flush_one(
    session: AsyncSession,
    conn: asyncpg.Connection,
    env: RoutingEnv,
    suppressor: Suppressor,
    group: Mapping[str, Any],
    rows: Sequence[Member],
    logs: Mapping[str, LogEntry],
    now: datetime,
    writes: _Writes,
    flushed: Flushed,
) -> None:
    key = group["key"]
    route = _route_of(group, suppressor.tree.by_key)
    if suppressor.route_muted_by(route):
        # Muted: nothing is sent and nothing forgotten; look again at the next interval.
        writes.next.append((key, now + timedelta(seconds=route.group_interval_seconds), False))
        return
    firing: dict[str, GroupAlert] = {}
    resolved: dict[str, GroupAlert] = {}
    for row in rows:
        fp, labels = row.fingerprint, row.labels
        if row.ends_at is not None and row.ends_at <= now:
            resolved[fp] = alert_item(row, firing=False)
        elif not suppressor.silenced_by(labels) and not suppressor.inhibitor.inhibited_by(fp, labels):
            firing[fp] = alert_item(row, firing=True)
    for notifier_id in route.notifier_ids:
        reason, told = decide(logs.get(notifier_id), set(firing), set(resolved), now, route.repeat_interval_seconds)
        if reason is None:
            continue
        changes = await related_changes(
            conn,
            concerned(rows, firing, told),
            now=now,
            window_seconds=route.changes_window_seconds,
            audience=ROUTED_GROUP_AUDIENCE,
        )
        event = group_event(
            key=key,
            reason=reason,
            group_labels=group["labels"],
            alerts=[*firing.values(), *(resolved[fp] for fp in sorted(told))],
            now=now,
            link=env.link,
            changes=changes,
        )
        enqueue(
            session,
            env.delivery,
            notifier_id=notifier_id,
            event=event,
            alert_group_key=key,
            alert_group_reason=reason,
        )
        writes.logs.append((key, notifier_id, sorted(firing), sorted(told)))
        flushed.sent.append((key, notifier_id, reason))
    writes.gone.extend((key, fp) for fp in resolved)
    still_firing = any(row.ends_at is None or row.ends_at > now for row in rows)
    if still_firing:
        writes.next.append((key, now + timedelta(seconds=route.group_interval_seconds), True))
    else:
        writes.closed.append(key)

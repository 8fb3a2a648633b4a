"""Writing alerts, and placing firing alerts in their groups.

Writers (POST /v1/alerts, a monitor's evaluation) only upsert `alerts` rows and mark the firing ones
`routing_pending`, in their own transaction; the routing job (`route_pending`, every process) claims pending
rows with `SKIP LOCKED` and upserts their groups and memberships. So a writer never waits for a group, the
tree is read in one place, and locks are always taken alerts first, then groups in key order: no deadlocks.

Alertmanager's merge rules: an alert posted again while it fires keeps its `starts_at` and takes the new
`ends_at`; one posted after it resolved starts a new firing. Without `ends_at` an external alert resolves
`RESOLVE_TIMEOUT` after it was last posted (`timeout`); a monitor's alert fires until the monitor resolves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import asyncpg
import msgspec
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.engine import driver_connection
from app.routing.labels import Labels, fingerprint
from app.routing.tree import Tree

RESOLVE_TIMEOUT = timedelta(minutes=5)
RESOLVED_RETENTION = timedelta(hours=24)  # resolved alerts stay visible this long (and outside every group)
ROUTE_BATCH = 1000
_LABELS = msgspec.json.Decoder(dict[str, str])


async def in_transaction(session: AsyncSession) -> asyncpg.Connection:
    """The session's asyncpg connection, inside the session's transaction. SQLAlchemy begins that transaction with
    its own first statement: a statement sent straight to asyncpg before it runs on its own (autocommit), so a
    row it claims `FOR UPDATE` is free again at once (two processes flushed one group before this)."""
    conn = await driver_connection(session)
    if not conn.is_in_transaction():
        await session.execute(text("SELECT 1"))
    return conn


@dataclass
class AlertInput:
    labels: Labels
    annotations: Labels = field(default_factory=dict)
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    generator_url: str | None = None
    source: str = "external"
    monitor_id: str | None = None
    dataset: str | None = None
    direct: bool = False  # sent by its monitor's own notifiers, not routed by the tree

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.labels)


_UPSERT = """
INSERT INTO alerts AS a (fingerprint, labels, annotations, source, monitor_id, dataset, starts_at, ends_at, timeout,
                         generator_url, direct, routing_pending, pending_since, created_at, updated_at)
SELECT fp, l::jsonb, an::jsonb, src, mon, ds, st, en, tmo, gen, dir, pend,
       CASE WHEN pend THEN $14::timestamptz END, $14, $14
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
            $8::timestamptz[], $9::boolean[], $10::text[], $11::boolean[], $12::boolean[])
     AS i(fp, l, an, src, mon, ds, st, en, tmo, gen, dir, pend)
ON CONFLICT (fingerprint) DO UPDATE SET
    starts_at = CASE WHEN a.ends_at IS NOT NULL AND a.ends_at <= $13 THEN EXCLUDED.starts_at
                     ELSE LEAST(a.starts_at, EXCLUDED.starts_at) END,
    ends_at = EXCLUDED.ends_at,
    timeout = EXCLUDED.timeout,
    labels = EXCLUDED.labels,
    annotations = EXCLUDED.annotations,
    source = EXCLUDED.source,
    monitor_id = EXCLUDED.monitor_id,
    dataset = EXCLUDED.dataset,
    generator_url = EXCLUDED.generator_url,
    direct = EXCLUDED.direct,
    routing_pending = EXCLUDED.routing_pending,
    -- A re-send while the alert still waits to be placed keeps its first arrival (group_wait counts from it).
    pending_since = CASE WHEN NOT EXCLUDED.routing_pending THEN NULL
                         WHEN a.routing_pending THEN a.pending_since
                         ELSE EXCLUDED.pending_since END,
    updated_at = EXCLUDED.updated_at
"""


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()


async def upsert(conn: asyncpg.Connection, alerts: Sequence[AlertInput], now: datetime) -> list[str]:
    """Write alerts (the last of equal label sets wins); returns their fingerprints in the order given."""
    by_fp: dict[str, AlertInput] = {}
    order = []
    for alert in alerts:
        fp = alert.fingerprint
        order.append(fp)
        by_fp[fp] = alert
    rows = sorted(by_fp.items())  # row locks in fingerprint order
    ends, timeouts = [], []
    for _, a in rows:
        timeout = a.ends_at is None and a.source == "external"
        ends.append(now + RESOLVE_TIMEOUT if timeout else a.ends_at)
        timeouts.append(timeout)
    await conn.execute(
        _UPSERT,
        [fp for fp, _ in rows],
        [_json(a.labels) for _, a in rows],
        [_json(a.annotations) for _, a in rows],
        [a.source for _, a in rows],
        [a.monitor_id for _, a in rows],
        [a.dataset for _, a in rows],
        [a.starts_at or now for _, a in rows],
        ends,
        timeouts,
        [a.generator_url for _, a in rows],
        [a.direct for _, a in rows],
        [not a.direct and (end is None or end > now) for (_, a), end in zip(rows, ends, strict=True)],
        now,
        now,
    )
    return order


async def resolve_others(
    conn: asyncpg.Connection, monitor_ids: Sequence[str], keep: Sequence[str], now: datetime
) -> None:
    """Resolve the monitors' open-ended alerts that are not in `keep` (the monitors no longer report them; a
    fingerprint is one monitor's: its labels name it)."""
    await conn.execute(
        """
        UPDATE alerts SET ends_at = $3, routing_pending = false, pending_since = NULL, updated_at = $3
        WHERE monitor_id = ANY($1::text[]) AND ends_at IS NULL AND NOT (fingerprint = ANY($2::text[]))
        """,
        list(monitor_ids),
        list(keep),
        now,
    )


@dataclass
class Placement:
    routed: int = 0
    groups_created: int = 0


_GROUPS = """
INSERT INTO alert_groups AS g (key, route_key, route_path, labels, notifier_ids, group_wait_seconds,
                               group_interval_seconds, repeat_interval_seconds, mute_time_intervals,
                               active_time_intervals, created_at, next_flush_at)
SELECT k, rk, rp, l::jsonb, string_to_array(n, ' '), gw, gi, ri,
       ARRAY(SELECT jsonb_array_elements_text(mu::jsonb)), ARRAY(SELECT jsonb_array_elements_text(ac::jsonb)),
       f, f + make_interval(secs => gw)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[],
            $9::text[], $10::text[], $11::timestamptz[]) AS i(k, rk, rp, l, n, gw, gi, ri, mu, ac, f)
ON CONFLICT (key) DO UPDATE SET
    route_path = EXCLUDED.route_path,
    notifier_ids = EXCLUDED.notifier_ids,
    group_wait_seconds = EXCLUDED.group_wait_seconds,
    group_interval_seconds = EXCLUDED.group_interval_seconds,
    repeat_interval_seconds = EXCLUDED.repeat_interval_seconds,
    mute_time_intervals = EXCLUDED.mute_time_intervals,
    active_time_intervals = EXCLUDED.active_time_intervals
RETURNING (xmax = 0) AS created
"""


async def route_pending(conn: asyncpg.Connection, tree: Tree, now: datetime, *, limit: int = ROUTE_BATCH) -> Placement:
    """Place up to `limit` pending firing alerts in their groups (one transaction, the caller's). A new group
    counts as formed when its first alert arrived (not when this job got to it, nor when it was sent again while
    waiting): group_wait runs from then."""
    claimed = await conn.fetch(
        """
        SELECT fingerprint, labels::text AS labels, COALESCE(pending_since, updated_at) AS arrived
        FROM alerts WHERE routing_pending
        ORDER BY fingerprint LIMIT $1 FOR UPDATE SKIP LOCKED
        """,
        limit,
    )
    placement = Placement(routed=len(claimed))
    if not claimed:
        return placement
    groups: dict[str, tuple[object, ...]] = {}
    formed: dict[str, datetime] = {}
    members: set[tuple[str, str]] = set()
    for row in claimed:
        labels = _LABELS.decode(row["labels"])  # msgspec: faster than the driver's json.loads
        for route in tree.match(labels):
            if not route.notifier_ids:
                continue  # nobody to tell: no group to keep
            key = route.group_key(labels)
            members.add((key, row["fingerprint"]))
            formed[key] = min(formed.get(key, row["arrived"]), row["arrived"], now)
            if key not in groups:
                groups[key] = (
                    key,
                    route.key,
                    route.path,
                    _json(route.group_labels(labels)),
                    " ".join(route.notifier_ids),  # ids never hold spaces
                    route.group_wait_seconds,
                    route.group_interval_seconds,
                    route.repeat_interval_seconds,
                    _json(route.mute_time_intervals),
                    _json(route.active_time_intervals),
                )
    if groups:
        ordered = [(*groups[k], formed[k]) for k in sorted(groups)]  # group locks in key order
        columns = [list(col) for col in zip(*ordered, strict=True)]
        created = await conn.fetch(_GROUPS, *columns)
        placement.groups_created = sum(1 for r in created if r["created"])
        pairs = sorted(members)
        await conn.execute(
            """
            INSERT INTO alert_group_members (group_key, fingerprint, added_at)
            SELECT k, f, $3 FROM unnest($1::text[], $2::text[]) AS i(k, f)
            ON CONFLICT DO NOTHING
            """,
            [k for k, _ in pairs],
            [f for _, f in pairs],
            now,
        )
    await conn.execute(
        "UPDATE alerts SET routing_pending = false, pending_since = NULL WHERE fingerprint = ANY($1::text[])",
        [r["fingerprint"] for r in claimed],
    )
    return placement


async def collect_garbage(conn: asyncpg.Connection, now: datetime) -> int:
    """Forget alerts resolved longer than RESOLVED_RETENTION ago that no group still holds."""
    deleted = await conn.execute(
        """
        DELETE FROM alerts a WHERE a.ends_at < $1
          AND NOT EXISTS (SELECT 1 FROM alert_group_members m WHERE m.fingerprint = a.fingerprint)
        """,
        now - RESOLVED_RETENTION,
    )
    return int(deleted.split()[-1])

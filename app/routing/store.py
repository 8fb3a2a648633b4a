"""Writing alerts, and placing them in their groups (the pipeline's dispatch: app/routing/pipeline.py).

Writers (POST /v1/alerts, a monitor's evaluation) only upsert `alerts` rows and mark them `routing_pending`, in
their own transaction; the router (`route_pending`) claims pending rows with `SKIP LOCKED` and upserts their
groups and memberships. So a writer never waits for a group, routes are worked out in one place, and locks are
always taken alerts first, then groups in key order: no deadlocks.

Alertmanager's rules (`types.Alert.Merge`, `provider/mem`): a post whose active range overlaps the stored one
merges with it (the earliest `starts_at`; the latest explicit resolve, or a later explicit `ends_at` over a
timed-out one), otherwise it replaces it (a new firing after a resolve starts anew); labels and annotations are
the latest post's. Without `ends_at` an external alert resolves the routing document's
`resolve_timeout_seconds` after it was last posted (`timeout`); a monitor's alert fires until the monitor
resolves it.
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
from app.routing import routes
from app.routing.document import DEFAULT_RESOLVE_TIMEOUT
from app.routing.labels import Labels, fingerprint
from app.routing.tree import Tree

MATCH_PULSE = timedelta(minutes=5)  # how long a match monitor's alert fires after a run that matched
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
    direct: bool = False  # sent by its monitor's own notifiers (its implicit route), not routed by the tree

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.labels)

    @property
    def times_out(self) -> bool:
        """An external alert without `ends_at` fires for the routing document's `resolve_timeout`."""
        return self.ends_at is None and self.source == "external"


# Whether the stored alert `a` and the post `EXCLUDED` overlap in activity (provider/mem's test; no end: never).
_OVERLAP = """((COALESCE(EXCLUDED.ends_at, 'infinity') > a.starts_at
               AND COALESCE(EXCLUDED.ends_at, 'infinity') < COALESCE(a.ends_at, 'infinity'))
              OR (EXCLUDED.starts_at > a.starts_at AND EXCLUDED.starts_at < COALESCE(a.ends_at, 'infinity')))"""
# types.Alert.Merge: the newer post wins, but for the earliest start and the end that rules.
# Now is EXCLUDED.updated_at, not a parameter: Citus fails a parameter in ON CONFLICT DO UPDATE of an INSERT ...
# SELECT into a Citus-managed local table, which `alerts` is there (app/db/citus_plan.py).
_OLD_END_RULES = """(EXCLUDED.ends_at <= EXCLUDED.updated_at AND a.ends_at <= EXCLUDED.updated_at
                    AND a.ends_at > EXCLUDED.ends_at)
                   OR (NOT EXCLUDED.ends_at <= EXCLUDED.updated_at AND NOT a.timeout
                       AND COALESCE(a.ends_at, 'infinity') > COALESCE(EXCLUDED.ends_at, 'infinity'))"""

_UPSERT = f"""
INSERT INTO alerts AS a (fingerprint, labels, annotations, source, monitor_id, dataset, starts_at, ends_at, timeout,
                         generator_url, direct, routing_pending, pending_since, created_at, updated_at)
SELECT fp, l::jsonb, an::jsonb, src, mon, ds, st, en, tmo, gen, dir, true, $12, $12, $12
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
            $8::timestamptz[], $9::boolean[], $10::text[], $11::boolean[])
     AS i(fp, l, an, src, mon, ds, st, en, tmo, gen, dir)
ON CONFLICT (fingerprint) DO UPDATE SET
    starts_at = CASE WHEN {_OVERLAP} THEN LEAST(a.starts_at, EXCLUDED.starts_at) ELSE EXCLUDED.starts_at END,
    ends_at = CASE WHEN {_OVERLAP} AND ({_OLD_END_RULES}) THEN a.ends_at ELSE EXCLUDED.ends_at END,
    timeout = CASE WHEN {_OVERLAP} AND ({_OLD_END_RULES}) THEN a.timeout ELSE EXCLUDED.timeout END,
    labels = EXCLUDED.labels,
    annotations = EXCLUDED.annotations,
    source = EXCLUDED.source,
    monitor_id = EXCLUDED.monitor_id,
    dataset = EXCLUDED.dataset,
    generator_url = EXCLUDED.generator_url,
    direct = EXCLUDED.direct,
    routing_pending = true,
    -- A re-send while the alert still waits to be placed keeps its first arrival (group_wait counts from it).
    pending_since = CASE WHEN a.routing_pending THEN a.pending_since ELSE EXCLUDED.pending_since END,
    updated_at = EXCLUDED.updated_at
"""


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()


async def upsert(
    conn: asyncpg.Connection,
    alerts: Sequence[AlertInput],
    now: datetime,
    resolve_timeout: timedelta | None = timedelta(seconds=DEFAULT_RESOLVE_TIMEOUT),
) -> list[str]:
    """Write alerts (the last of equal label sets in one call wins) and mark them for the router; returns their
    fingerprints in the order given. `resolve_timeout`: how long an external alert without `ends_at` fires
    (None only when no alert `times_out`). One statement: on a connection outside a transaction, its own."""
    by_fp: dict[str, AlertInput] = {}
    order = []
    for alert in alerts:
        fp = alert.fingerprint
        order.append(fp)
        by_fp[fp] = alert
    rows = sorted(by_fp.items())  # row locks in fingerprint order
    ends: list[datetime | None] = []
    timeouts = []
    for _, a in rows:
        if a.times_out:
            assert resolve_timeout is not None  # the caller reads it when an alert `times_out`
            ends.append(now + resolve_timeout)
        else:
            ends.append(a.ends_at)
        timeouts.append(a.times_out)
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
        UPDATE alerts SET ends_at = $3, updated_at = $3, routing_pending = true,
                          pending_since = CASE WHEN routing_pending THEN pending_since ELSE $3 END
        WHERE monitor_id = ANY($1::text[]) AND ends_at IS NULL AND NOT (fingerprint = ANY($2::text[]))
        """,
        list(monitor_ids),
        list(keep),
        now,
    )


async def set_monitor_events(conn: asyncpg.Connection, events: Sequence[tuple[str, str]]) -> None:
    """The monitor event each of these alerts (fingerprint, event id) last changed with: its messages are
    rendered from it, and list their deliveries in it."""
    if events:
        await conn.execute(
            "UPDATE alerts a SET monitor_event_id = i.e FROM unnest($1::text[], $2::text[]) AS i(f, e)"
            " WHERE a.fingerprint = i.f",
            [f for f, _ in events],
            [e for _, e in events],
        )


@dataclass
class Placement:
    routed: int = 0
    groups_created: int = 0


_GROUPS = """
INSERT INTO alert_groups AS g (key, route_key, route_path, labels, notifier_ids, group_wait_seconds,
                               group_interval_seconds, repeat_interval_seconds, mute_time_intervals,
                               active_time_intervals, monitor_id, created_at, next_flush_at)
SELECT k, rk, rp, l::jsonb, string_to_array(n, ' '), gw, gi, ri,
       ARRAY(SELECT jsonb_array_elements_text(mu::jsonb)), ARRAY(SELECT jsonb_array_elements_text(ac::jsonb)),
       mon, f, LEAST(f + make_interval(secs => gw), at_once)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[],
            $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::timestamptz[])
     AS i(k, rk, rp, l, n, gw, gi, ri, mu, ac, mon, f, at_once)
ON CONFLICT (key) DO UPDATE SET
    route_path = EXCLUDED.route_path,
    notifier_ids = EXCLUDED.notifier_ids,
    group_wait_seconds = EXCLUDED.group_wait_seconds,
    group_interval_seconds = EXCLUDED.group_interval_seconds,
    repeat_interval_seconds = EXCLUDED.repeat_interval_seconds,
    mute_time_intervals = EXCLUDED.mute_time_intervals,
    active_time_intervals = EXCLUDED.active_time_intervals,
    -- Sooner when the new alert asks for it: a monitor's change, or (before the first flush) an alert whose
    -- group_wait has passed already (Alertmanager's aggrGroup.insert).
    next_flush_at = CASE WHEN g.monitor_id IS NOT NULL OR g.flushed_at IS NULL
                         THEN LEAST(g.next_flush_at, EXCLUDED.next_flush_at) ELSE g.next_flush_at END
RETURNING (xmax = 0) AS created
"""


async def route_pending(conn: asyncpg.Connection, tree: Tree, now: datetime, *, limit: int = ROUTE_BATCH) -> Placement:
    """Place up to `limit` pending alerts in their groups (one transaction, the caller's). A new group counts as
    formed when its first alert arrived (not when this job got to it, nor when it was sent again while waiting):
    group_wait runs from then; an alert whose own `starts_at` + group_wait has passed makes a group that has not
    flushed yet due at once. Resolved alerts are not placed (nobody needs telling of an alert it never heard
    of), but any change of a monitor's alert makes its monitor's groups due at once."""
    claimed = await conn.fetch(
        """
        SELECT fingerprint, labels::text AS labels, COALESCE(pending_since, updated_at) AS arrived, starts_at,
               ends_at, direct, monitor_id
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
    at_once: dict[str, datetime | None] = {}
    members: set[tuple[str, str]] = set()
    firing = [r for r in claimed if r["ends_at"] is None or r["ends_at"] > now]
    routed = await routes.load(conn, tree, [r["monitor_id"] for r in firing if r["direct"]])
    for row in firing:
        labels = _LABELS.decode(row["labels"])  # msgspec: faster than the driver's json.loads
        for route in routed.of(labels, row["monitor_id"] if row["direct"] else None):
            if not route.notifier_ids:
                continue  # nobody to tell: no group to keep
            key = route.group_key(labels)
            members.add((key, row["fingerprint"]))
            formed[key] = min(formed.get(key, row["arrived"]), row["arrived"], now)
            if route.group_wait_seconds == 0 or row["starts_at"] + timedelta(seconds=route.group_wait_seconds) <= now:
                at_once[key] = now
            else:
                at_once.setdefault(key, None)
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
                    route.monitor_id,
                )
    if groups:
        ordered = [(*groups[k], formed[k], at_once[k]) for k in sorted(groups)]  # group locks in key order
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
    changed = [r["fingerprint"] for r in claimed if r["monitor_id"] is not None]
    if changed:
        await conn.execute(
            """
            UPDATE alert_groups g SET next_flush_at = LEAST(g.next_flush_at, $2)
            FROM (SELECT DISTINCT group_key FROM alert_group_members WHERE fingerprint = ANY($1::text[])) m
            WHERE g.key = m.group_key AND g.monitor_id IS NOT NULL
            """,
            changed,
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

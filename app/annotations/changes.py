"""What changed: the annotations related to the alerts of a notification, newest first, each with why it matched.

An annotation *relates* to an alert when
- it names the alert's dataset (the alert's `dataset` label: a monitor's alert has it, an external alert may), or
- it has labels and every one of them is on the alert with the same value (`service=checkout`),
and the receiving side may see it (`audience`, app/access.py). Beacon's own monitor state-change markers never
count; an annotation written by a dataset-limited token (`confined`) relates by its datasets only.

The changes of a notification are its related annotations whose time or span falls between `window_seconds`
before the first firing alert of the notification started (the first alert at all, when none fires any more)
and the notification's time: at most `LISTED`, newest first, and how many more there are.

`related_changes` is the one entry point: every place that builds a message (a routed group's, a monitor's own)
and every view that shows an alert (`GET /v1/alerts/{fingerprint}`, groups, `POST /v1/routing/test`, the
console) calls it (`related_changes_many` for a page of groups). One statement: the span index finds the
annotations of the window (migration 0025), the relation and the audience are decided in PostgreSQL, and only
the listed rows come back, with the count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg
import msgspec

from adapters.contract import RecentChange
from app.db.annotation import ENVIRONMENT_WIDE
from app.routing import config
from app.routing.labels import fingerprint
from app.routing.tree import Tree
from app.timefmt import iso_ms, iso_ms_or_none

LISTED = 5
DEFAULT_WINDOW_SECONDS = 3_600
MAX_LABEL_SETS = 200  # distinct label sets of one notification compared in PostgreSQL (see `_label_sets`)

# The datasets the receiving side may see: None, every dataset (app/access.py `changes_audience`).
Audience = tuple[str, ...] | None


@dataclass(frozen=True)
class Concerned:
    """An alert a notification (or a view) is about: its labels, and when it started firing (None: as the
    `alerts` table has it, by the fingerprint of these labels; now when it is not there)."""

    labels: Mapping[str, str]
    starts_at: datetime | None = None
    firing: bool = True


@dataclass(frozen=True)
class Changes:
    listed: list[RecentChange]
    more: int  # related annotations in the window beyond those listed

    @property
    def total(self) -> int:
        return len(self.listed) + self.more


NONE = Changes([], 0)

# One statement for one notification or many (a page of groups): each request's window and alerts, then for
# each, its listed annotations and their count.
_RELATED = """
    a.origin <> 'monitor'
    AND tstzrange(a.time, COALESCE(a.end_time, a.time), '[]') && tstzrange(r.low, $5, '[]')
    AND (a.datasets && r.ds OR (NOT a.confined AND a.labels <> '{}'::jsonb AND a.labels <@ ANY (r.ls)))
    AND (r.aud IS NULL OR a.datasets <@ r.aud)
"""
# The count and the listed rows apart: a window count would carry every matching row whole through a sort.
_QUERY = f"""
WITH r AS (
    SELECT i, low,
           ARRAY(SELECT jsonb_array_elements_text(ds::jsonb)) AS ds,
           ARRAY(SELECT jsonb_array_elements(ls::jsonb)) AS ls,
           CASE WHEN au IS NOT NULL THEN ARRAY(SELECT jsonb_array_elements_text(au::jsonb)) END AS aud
    FROM unnest($1::int[], $2::timestamptz[], $3::text[], $4::text[], $6::text[]) AS u(i, low, ds, ls, au)
)
SELECT r.i, c.id, c.type, c.title, c.labels::text AS labels, c.datasets, c.time, c.end_time, c.url, c.confined,
       n.total
FROM r
CROSS JOIN LATERAL (SELECT count(*) AS total FROM annotations a WHERE {_RELATED}) n
CROSS JOIN LATERAL (
    SELECT a.* FROM annotations a WHERE {_RELATED} ORDER BY a.time DESC, a.id DESC LIMIT {LISTED}
) c
"""

_LABELS = msgspec.json.Decoder(dict[str, str])


@dataclass(frozen=True)
class Wanted:
    """One notification's (or shown group's) lookup: its alerts, its window (see `related_changes`) and the
    datasets whoever reads it may see (app/access.py)."""

    alerts: Sequence[Concerned]
    window_seconds: int | None
    audience: Audience


async def related_changes(
    conn: asyncpg.Connection,
    alerts: Sequence[Concerned],
    *,
    now: datetime,
    window_seconds: int | None,
    audience: Audience,
) -> Changes:
    """The changes of a notification about `alerts` made at `now` (see the module's docstring).

    `window_seconds`: the route's `changes_window_seconds` (0: none); None: the longest of the windows of the
    routes these alerts' labels take in the stored routing tree (a monitor's own message). `audience`: the
    datasets whoever reads the message may see (None: every one)."""
    return (await related_changes_many(conn, [Wanted(alerts, window_seconds, audience)], now=now))[0]


async def related_changes_many(conn: asyncpg.Connection, requests: Sequence[Wanted], *, now: datetime) -> list[Changes]:
    """`related_changes` for several notifications (a flush's, or groups shown together) at once: one
    statement."""
    windows = [w.window_seconds for w in requests]
    if any(w is None for w in windows):
        tree = (await config.current(conn)).tree
        windows = [_window_of(tree, r.alerts) if w is None else w for r, w in zip(requests, windows, strict=True)]
    wanted = [i for i, (r, w) in enumerate(zip(requests, windows, strict=True)) if r.alerts and w]
    found = [NONE] * len(requests)
    if not wanted:
        return found
    firsts = await _first_starts(conn, [requests[i].alerts for i in wanted], now)
    rows = await conn.fetch(
        _QUERY,
        wanted,
        # An alert may say it starts in the future: the window then ends, empty, at `now` (a range with its lower
        # bound after its upper one was a 500).
        [min(first - timedelta(seconds=windows[i] or 0), now) for i, first in zip(wanted, firsts, strict=True)],
        [_datasets_json(requests[i].alerts) for i in wanted],
        [_label_sets(requests[i].alerts) for i in wanted],
        now,
        [_audience_json(requests[i].audience) for i in wanted],
    )
    by_request: dict[int, list[asyncpg.Record]] = {}
    for row in rows:
        by_request.setdefault(row["i"], []).append(row)
    for i, first in zip(wanted, firsts, strict=True):
        listed = by_request.get(i)
        if listed:
            alerts = requests[i].alerts
            found[i] = Changes([_change(row, alerts, first, now) for row in listed], listed[0]["total"] - len(listed))
    return found


def _audience_json(audience: Audience) -> str | None:
    return None if audience is None else msgspec.json.encode(sorted(audience)).decode()


def _datasets_json(alerts: Sequence[Concerned]) -> str:
    return msgspec.json.encode(sorted({a.labels["dataset"] for a in alerts if a.labels.get("dataset")})).decode()


def _label_sets(alerts: Sequence[Concerned]) -> str:
    """The alerts' distinct label sets, as one JSON array. A group of thousands of alerts is compared through
    its first MAX_LABEL_SETS distinct sets (by sorted labels): its changes are then those of a sample, which is
    what a message about so many alerts can show anyway."""
    found = sorted({msgspec.json.encode(dict(sorted(a.labels.items()))).decode() for a in alerts})
    return "[" + ",".join(found[:MAX_LABEL_SETS]) + "]"


async def _first_starts(
    conn: asyncpg.Connection, requests: Sequence[Sequence[Concerned]], now: datetime
) -> list[datetime]:
    """For each request, when its first firing alert started (its first alert at all when none fires); starts
    not given are read from `alerts` (one statement for all)."""
    chosen = [[a for a in alerts if a.firing] or list(alerts) for alerts in requests]
    unknown = {fingerprint(a.labels) for alerts in chosen for a in alerts if a.starts_at is None}
    starts: dict[str, datetime] = {}
    if unknown:
        rows = await conn.fetch(
            "SELECT fingerprint, starts_at FROM alerts WHERE fingerprint = ANY($1::text[])", sorted(unknown)
        )
        starts = {r["fingerprint"]: r["starts_at"] for r in rows}
    return [
        min(a.starts_at if a.starts_at is not None else starts.get(fingerprint(a.labels), now) for a in alerts)
        for alerts in chosen
    ]


def _window_of(tree: Tree, alerts: Sequence[Concerned]) -> int:
    return max((route.changes_window_seconds for a in alerts for route in tree.match(a.labels)), default=0)


def _change(row: asyncpg.Record, alerts: Sequence[Concerned], first: datetime, now: datetime) -> RecentChange:
    labels = _LABELS.decode(row["labels"])
    datasets = list(row["datasets"])
    return RecentChange(
        id=row["id"],
        type=row["type"],
        title=row["title"],
        labels=labels,
        datasets=datasets or [ENVIRONMENT_WIDE],
        time=iso_ms(row["time"]),
        end_time=iso_ms_or_none(row["end_time"]),
        url=row["url"],
        when=when_text(row["time"], row["end_time"], first, now),
        why=why_text(datasets, labels, row["confined"], alerts),
    )


def why_text(datasets: Sequence[str], labels: Mapping[str, str], confined: bool, alerts: Sequence[Concerned]) -> str:
    """`dataset web`, `service=checkout, env=prod`, or both: what ties the annotation to the alerts, so that a
    wrong match can be seen and fixed."""
    reasons: list[str] = []
    alert_datasets = {a.labels.get("dataset") for a in alerts}
    shared = [d for d in datasets if d in alert_datasets]
    if shared:
        reasons.append(f"dataset {shared[0]}")
    if labels and not confined and any(all(a.labels.get(k) == v for k, v in labels.items()) for a in alerts):
        reasons.append(", ".join(f"{k}={v}" for k, v in sorted(labels.items())))
    return " and ".join(reasons)


def duration_text(delta: timedelta) -> str:
    """`45 s`, `4 min`, `2 h 5 min`, `3 d 2 h`: a readable length, to the minute past the first minute."""
    seconds = int(abs(delta).total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def _relative(t: datetime, first: datetime) -> str:
    if abs(t - first) < timedelta(seconds=1):
        return "at the first alert"
    side = "before" if t < first else "after"
    return f"{duration_text(t - first)} {side} the first alert"


def when_text(time: datetime, end_time: datetime | None, first: datetime, now: datetime) -> str:
    """`4 min before the first alert`; a span: `from 10 min before the first alert, still running` (or `to 2 min
    after the first alert`)."""
    if end_time is None or end_time == time:
        return _relative(time, first)
    start = f"from {_relative(time, first)}"
    if end_time > now:
        return f"{start}, still running"
    return f"{start} to {_relative(end_time, first)}"

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
console) calls it. One statement: the span index finds the annotations of the window (migration 0025), the
relation and the audience are decided in PostgreSQL, and only the listed rows come back, with the count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg
import msgspec

from adapters.base import RecentChange
from app.db.annotation import ENVIRONMENT_WIDE
from app.routing import config
from app.routing.labels import fingerprint
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

_QUERY = f"""
SELECT id, type, title, labels::text AS labels, datasets, time, end_time, url, confined,
       count(*) OVER () AS total
FROM annotations a
WHERE origin <> 'monitor'
  AND tstzrange(time, COALESCE(end_time, time), '[]') && tstzrange($1, $2, '[]')
  AND (datasets && $3::text[]
       OR (NOT confined AND labels <> '{{}}'::jsonb AND labels <@ ANY ($4::text[]::jsonb[])))
  AND ($5::text[] IS NULL OR datasets <@ $5::text[])
ORDER BY time DESC, id DESC
LIMIT {LISTED}
"""

_LABELS = msgspec.json.Decoder(dict[str, str])


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
    if not alerts:
        return NONE
    if window_seconds is None:
        window_seconds = await _window_of(conn, alerts)
    if window_seconds <= 0:
        return NONE
    first = await _first_start(conn, alerts, now)
    rows = await conn.fetch(
        _QUERY,
        first - timedelta(seconds=window_seconds),
        now,
        sorted({a.labels["dataset"] for a in alerts if a.labels.get("dataset")}),
        _label_sets(alerts),
        None if audience is None else list(audience),
    )
    if not rows:
        return NONE
    listed = [_change(row, alerts, first, now) for row in rows]
    return Changes(listed, rows[0]["total"] - len(listed))


def _label_sets(alerts: Sequence[Concerned]) -> list[str]:
    """The alerts' distinct label sets as JSON. A group of thousands of alerts is compared through its first
    MAX_LABEL_SETS distinct sets (by sorted labels): its changes are then those of a sample, which is what a
    message about so many alerts can show anyway."""
    found = sorted({msgspec.json.encode(dict(sorted(a.labels.items()))).decode() for a in alerts})
    return found[:MAX_LABEL_SETS]


async def _first_start(conn: asyncpg.Connection, alerts: Sequence[Concerned], now: datetime) -> datetime:
    """When the first firing alert started (the first alert at all when none fires)."""
    wanted = [a for a in alerts if a.firing] or list(alerts)
    known = [a.starts_at for a in wanted if a.starts_at is not None]
    unknown = [a.labels for a in wanted if a.starts_at is None]
    if unknown:
        found = await conn.fetchval(
            "SELECT min(starts_at) FROM alerts WHERE fingerprint = ANY($1::text[])", [fingerprint(x) for x in unknown]
        )
        known.append(found or now)
    return min(known)


async def _window_of(conn: asyncpg.Connection, alerts: Sequence[Concerned]) -> int:
    tree = (await config.current(conn)).tree
    return max(route.changes_window_seconds for a in alerts for route in tree.match(a.labels))


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

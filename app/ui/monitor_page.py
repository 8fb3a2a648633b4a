"""What a monitor's own console page shows (`/ui/monitors/{id}`, where notifications and chart annotations
link): its definition, its value over time against the threshold with its state changes, its history and
deliveries, and who receives its messages (its own notifiers, or the routes its labels take).

Gathered from the areas' services, each under the scope its API route needs: a token without
`notifiers:read` sees no deliveries, one without `routing:read` not which routes the monitor takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import changes_audience, shows_changes
from app.annotations.changes import Changes, Concerned, related_changes
from app.auth import Principal
from app.db.engine import driver_connection
from app.deliveries import service as deliveries
from app.deliveries.schemas import DeliveryOut
from app.errors import BeaconError
from app.monitors import alerting
from app.monitors import service as monitors
from app.monitors.schemas import MonitorEventOut, MonitorOut
from app.pagination import MAX_LIMIT, CursorCodec
from app.routing import service as routing
from app.routing.env import RoutingEnv
from app.routing.schemas import RoutingTestOut
from app.ui.charts import Annotation, Chart, Series, time_chart
from app.ui.monitor_values import ValueSeries, value_series
from app.ui.names import notifier_names
from app.ui.ranges import TimeRange
from app.ui.service import dataset_annotations, event_label, monitor_timeline, parse_time
from app.ui.timeline import Timeline

RECENT_DELIVERIES = 20


@dataclass
class MonitorPage:
    monitor: MonitorOut
    timeline: Timeline
    history: list[MonitorEventOut]  # newest first
    more_history: bool
    chart: Chart
    values: ValueSeries | None  # a threshold monitor's value over time
    deliveries: list[DeliveryOut] | None  # None: the token may not read notifiers' deliveries
    notifier_names: dict[str, str]
    routing: RoutingTestOut | None  # the routes a monitor without notifiers of its own takes
    routing_error: str | None
    changes: Changes | None  # what changed before its alert (or before now); None: no `annotations:read`


async def monitor_page(
    session: AsyncSession,
    codec: CursorCodec,
    pool: asyncpg.Pool,
    routing_env: RoutingEnv,
    who: Principal,
    monitor_id: str,
    rng: TimeRange,
    now: datetime,
) -> MonitorPage:
    row = await monitors.get_monitor(session, who, monitor_id)  # 404 for another dataset's, as for an unknown id
    m = await monitors.render(session, row)
    found = await monitors.history(session, codec, who, m.id, limit=MAX_LIMIT, cursor=None)
    timeline = monitor_timeline(m, found.data, found.has_more, rng)

    values: ValueSeries | None = None
    if m.type == "threshold":
        values = await value_series(pool, who, m, rng.start, rng.end, now)
        series = Series(f"value over {m.range_seconds} s windows", values.points)
        step = values.window.total_seconds()
    else:  # a match_event monitor: how many events each run matched
        matched = [(parse_time(e.time), e.value) for e in found.data if e.kind == "matched"]
        series, step = Series("matching events per run", matched), float(m.interval_seconds)
    changes = [
        Annotation(id=e.id or "", type=e.kind, title=event_label(e), time=parse_time(e.time))
        for e in found.data
        if e.kind != "matched"
    ]
    recent: Changes | None = None
    if shows_changes(who):
        # Its dataset's annotations on the value chart too (deploys beside the line), and what changed before
        # its alert, as its messages say it.
        marks, _ = await dataset_annotations(session, codec, who, m.dataset, rng.start, rng.end, monitor_markers=False)
        changes += marks
        recent = await related_changes(
            await driver_connection(session),
            [Concerned(alerting.labels_of(row, {}))],
            now=now,
            window_seconds=None,
            audience=changes_audience(who),
        )
    chart = time_chart(
        [series],
        # A range holding more windows than a chart draws is drawn from its first window drawn, not as a sliver.
        start=max(rng.start, values.start) if values else rng.start,
        end=rng.end,
        step_seconds=step,
        annotations=changes,
        kind="line" if m.type == "threshold" else "bars",
        threshold=m.threshold if m.type == "threshold" else None,
    )

    sent: list[DeliveryOut] | None = None
    if who.has_scope("notifiers:read"):
        listed = await deliveries.list_deliveries(
            session, codec, who, notifier_id=None, monitor_id=m.id, status=None, limit=RECENT_DELIVERIES, cursor=None
        )
        sent = listed.data

    routes: RoutingTestOut | None = None
    routing_error: str | None = None
    if not m.notifier_ids and who.has_scope("routing:read"):
        try:
            routes = await routing.test_routing(session, routing_env, who, alerting.labels_of(row, {}))
        except BeaconError as exc:  # labels the routing test refuses: said on the page, the rest stands
            routing_error = exc.message
    ids = set(m.notifier_ids) | {d.notifier_id for d in sent or ()}
    ids |= {n for r in (routes.routes if routes else ()) for n in r.notifier_ids}
    names = await notifier_names(session, who, ids)
    return MonitorPage(
        m, timeline, found.data, found.has_more, chart, values, sent, names, routes, routing_error, recent
    )

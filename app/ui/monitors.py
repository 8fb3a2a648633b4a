"""Console pages for monitors: the list (each one's state, last value against its threshold, its history on a
timeline), and one monitor's own page, where its notifications link."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.monitors import service as monitors
from app.pagination import CursorCodec
from app.services import Services
from app.timefmt import utcnow
from app.ui import service
from app.ui.charts import type_colour
from app.ui.monitor_page import monitor_page
from app.ui.ranges import PRESETS, range_for_window, resolve_range
from app.ui.render import signed_page
from app.ui.session import signed_in

HISTORY_SHOWN = 50  # rows of the history table (the timeline and chart use up to a page of 100)


@get("/monitors", include_in_schema=False, opt=requires("monitors:read"))
async def monitor_list(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
    range_: Annotated[str | None, QueryParameter(name="range")] = None,
    cursor: str | None = None,
) -> Response[str]:
    who = await signed_in(request)
    rng = resolve_range(range_, None, None, utcnow())
    views, next_cursor = await service.monitor_views(db, codec, who, rng, cursor=cursor)
    return signed_page(
        request,
        "monitors.html",
        nav="monitors",
        views=views,
        next_cursor=next_cursor,
        rng=rng,
        presets=list(PRESETS),
        operators=service.OPERATORS,
        can_query=who.has_scope("query"),
        value=service.cell,
    )


@get("/monitors/{monitor_id:str}", include_in_schema=False, opt=requires("monitors:read"))
async def monitor_detail(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
    services: Services,
    monitor_id: str,
    range_: Annotated[str | None, QueryParameter(name="range")] = None,
    start: str | None = None,
    end: str | None = None,
) -> Response[str]:
    who = await signed_in(request)
    now = utcnow()
    # Without a range, one that fits the monitor: its chart's points are its windows (a match monitor's runs).
    row = await monitors.get_monitor(db, who, monitor_id)  # 404 for another dataset's, as for an unknown id
    window = row.range_seconds if row.type == "threshold" else row.interval_seconds
    default = range_for_window(timedelta(seconds=window))
    rng = resolve_range(range_, start or None, end or None, now, default=default)
    async with services.query_slots.hold(who.token_id):  # its chart queries: a turn among the token's queries
        data = await monitor_page(db, codec, services.query_pool, services.routing_env, who, monitor_id, rng, now)
    m = data.monitor
    return signed_page(
        request,
        "monitor.html",
        nav="monitors",
        m=m,
        data=data,
        tl=data.timeline,
        rng=rng,
        presets=list(PRESETS),
        operators=service.OPERATORS,
        breached=service.breached(m),
        can_query=who.has_scope("query"),
        can_read_notifiers=who.has_scope("notifiers:read"),
        can_read_routing=who.has_scope("routing:read"),
        value=service.cell,
        history_shown=HISTORY_SHOWN,
        colour=type_colour,
    )

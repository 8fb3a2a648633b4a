"""Console page for monitors: each one's state, last value against its threshold, and its history on a timeline."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.pagination import CursorCodec
from app.timefmt import utcnow
from app.ui import service
from app.ui.ranges import PRESETS, resolve_range
from app.ui.render import signed_page
from app.ui.session import signed_in


@get("/monitors", include_in_schema=False)
async def monitor_list(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
    range_: Annotated[str | None, QueryParameter(name="range")] = None,
    cursor: str | None = None,
) -> Response[str]:
    who = await signed_in(request)
    who.require_scope("monitors:read")
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

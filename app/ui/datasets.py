"""Console pages for datasets: the list, and one dataset's chart with its annotations and a query box."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.datasets import service as datasets
from app.pagination import MAX_LIMIT, CursorCodec
from app.services import Services
from app.timefmt import iso_ms, utcnow
from app.ui import service
from app.ui.charts import time_chart, type_colour
from app.ui.ranges import PRESETS, resolve_range
from app.ui.render import Timer, signed_page
from app.ui.session import signed_in


@get("/datasets", include_in_schema=False, opt=requires("datasets:read"))
async def dataset_list(
    request: Request[Any, Any, Any], db: AsyncSession, codec: CursorCodec, cursor: str | None = None
) -> Response[str]:
    who = await signed_in(request)
    found = await datasets.list_datasets(db, codec, who, limit=MAX_LIMIT, cursor=cursor)
    busy = await datasets.activity(db, [d.name for d in found.data], utcnow())
    return signed_page(
        request,
        "datasets.html",
        nav="datasets",
        datasets=found.data,
        activity=busy,
        iso=iso_ms,
        next_cursor=found.next_cursor,
        can_query=who.has_scope("query"),
    )


@get("/datasets/{name:str}", include_in_schema=False, opt=requires("query"))
async def dataset_page(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
    services: Services,
    name: str,
    range_: Annotated[str | None, QueryParameter(name="range")] = None,
    start: str | None = None,
    end: str | None = None,
    fn: str = "count",
    field: str | None = None,
    q: str | None = None,
) -> Response[str]:
    timer = Timer()
    who = await signed_in(request)
    ds = await datasets.get_dataset(db, name, who)
    rng = resolve_range(range_, start or None, end or None, utcnow())
    field = field or None
    timer.mark("auth")
    async with services.query_slots.hold(who.token_id):  # a turn among the token's queries (app/query/slots.py)
        data = await service.dataset_view(
            db, codec, services.query_pool, services.settings, who, ds, rng, fn=fn, field_name=field, q=q
        )
    timer.add(data.timings)
    annotations = data.annotations or []
    chart = time_chart(
        [data.series],
        start=rng.start,
        end=rng.end,
        step_seconds=rng.step.total_seconds(),
        annotations=annotations,
        kind="bars" if fn == "count" else "line",
    )
    view = service.result_view(data.query_result, rng.step) if data.query_result else None
    query_chart = None
    if view and view.series:
        query_chart = time_chart(
            view.series,
            start=rng.start,
            end=rng.end,
            step_seconds=view.step_seconds,
            annotations=annotations,
            kind="line",
        )
    response = signed_page(
        request,
        "dataset.html",
        nav="datasets",
        dataset=ds,
        rng=rng,
        presets=list(PRESETS),
        functions=list(service.FUNCTIONS),
        fn=fn,
        field=field,
        numeric_fields=data.numeric_fields,
        chart=chart,
        series=data.series,
        total=sum(v for _, v in data.series.points if v is not None) if fn == "count" else None,
        annotations=sorted(annotations, key=lambda a: a.time),
        more_annotations=data.more_annotations,
        can_read_annotations=data.annotations is not None,
        chart_colour=type_colour,
        iso=iso_ms,
        legend=sorted({(a.type, type_colour(a.type)) for a in annotations}),
        q=q if q is not None else service.default_query(ds.name, rng.step_text),
        view=view,
        query_chart=query_chart,
        query_error=data.query_error,
        can_annotate=who.has_scope("annotations:write"),
        now=utcnow(),
    )
    timer.mark("render")
    response.headers.update(timer.header())
    return response

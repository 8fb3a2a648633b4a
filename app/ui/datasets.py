"""Console pages for datasets: the list, and one dataset's chart with its annotations and a query box."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.datasets import service as datasets
from app.errors import BeaconError
from app.pagination import MAX_LIMIT, CursorCodec
from app.timefmt import iso_ms, utcnow
from app.ui import service
from app.ui.charts import Annotation, time_chart, type_colour
from app.ui.ranges import PRESETS, resolve_range
from app.ui.render import Timer, signed_page
from app.ui.session import signed_in

MAX_FIELD_PAGES = 5


@get("/datasets", include_in_schema=False)
async def dataset_list(
    request: Request[Any, Any, Any], db: AsyncSession, codec: CursorCodec, cursor: str | None = None
) -> Response[str]:
    who = await signed_in(request)
    who.require_scope("datasets:read")
    found = await datasets.list_datasets(db, codec, who, limit=MAX_LIMIT, cursor=cursor)
    return signed_page(
        request,
        "datasets.html",
        nav="datasets",
        datasets=found.data,
        next_cursor=found.next_cursor,
        can_query=who.has_scope("query"),
    )


@get("/datasets/{name:str}", include_in_schema=False)
async def dataset_page(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
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
    who.require_scope("query")
    ds = await datasets.get_dataset(db, name, who)
    rng = resolve_range(range_, start or None, end or None, utcnow())
    field = field or None
    timer.mark("auth")

    numeric_fields: list[str] | None = None
    if who.has_scope("datasets:read"):
        numeric_fields = []
        cursor = None
        for _ in range(MAX_FIELD_PAGES):
            fields = await datasets.list_fields(db, codec, ds, limit=MAX_LIMIT, cursor=cursor)
            numeric_fields += [f.name for f in fields.data if "number" in f.types]
            if not (cursor := fields.next_cursor):
                break
        numeric_fields.sort()
    annotations: list[Annotation] = []
    more_annotations = False
    if who.has_scope("annotations:read"):
        annotations, more_annotations = await service.dataset_annotations(db, codec, ds.name, rng.start, rng.end)
    timer.mark("annotations")

    series, _ = await service.chart_series(
        request.app.state.engine, request.app.state.settings, who, ds.name, rng, fn, field
    )
    chart = time_chart(
        [series],
        start=rng.start,
        end=rng.end,
        step_seconds=rng.step.total_seconds(),
        annotations=annotations,
        kind="bars" if fn == "count" else "line",
    )
    timer.mark("chart")

    query_text = q if q is not None else service.default_query(ds.name, rng.step_text)
    view, query_chart, query_error = None, None, None
    if q:
        try:
            result = await service.query(request.app.state.engine, request.app.state.settings, who, q, rng)
        except BeaconError as exc:  # shown next to the query box; the rest of the page stands
            query_error = exc.message
        else:
            view = service.result_view(result, rng.step)
            if view.series:
                query_chart = time_chart(
                    view.series,
                    start=rng.start,
                    end=rng.end,
                    step_seconds=view.step_seconds,
                    annotations=annotations,
                    kind="line",
                )
        timer.mark("query")

    total = sum(v for _, v in series.points if v is not None) if fn == "count" else None
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
        numeric_fields=numeric_fields,
        chart=chart,
        series=series,
        total=total,
        annotations=sorted(annotations, key=lambda a: a.time),
        more_annotations=more_annotations,
        can_read_annotations=who.has_scope("annotations:read"),
        chart_colour=type_colour,
        iso=iso_ms,
        legend=sorted({(a.type, type_colour(a.type)) for a in annotations}),
        q=query_text,
        ran=bool(q),
        view=view,
        query_chart=query_chart,
        query_error=query_error,
    )
    timer.mark("render")
    response.headers.update(timer.header())
    return response

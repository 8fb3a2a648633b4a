"""What the console's pages show, gathered from the areas' own services (no SQL of its own).

Charts run through the query service, exactly as `POST /v1/query` would (same access checks, same read-only
transaction and statement timeout); annotations come from the annotations service's overlap listing.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

import asyncpg
import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from app.annotations.service import list_annotations
from app.auth import Principal
from app.datasets.service import list_fields
from app.db.dataset import Dataset
from app.errors import BeaconError, check_choice
from app.monitors import service as monitors
from app.monitors.evaluation import series_key
from app.monitors.schemas import MonitorEventOut, MonitorOut
from app.pagination import MAX_LIMIT, CursorCodec
from app.query.schemas import QueryRequest, QueryResult
from app.query.service import run_query
from app.result_warnings import ResultWarning
from app.settings import Settings
from app.ui.charts import Annotation, Series
from app.ui.ranges import TimeRange
from app.ui.timeline import HistoryEvent, Timeline, state_timeline

# The summary functions a chart offers, as query-language aggregations of a field `f`.
FUNCTIONS: dict[str, str] = {
    "count": "count()",
    "avg": "avg({f})",
    "min": "min({f})",
    "max": "max({f})",
    "sum": "sum({f})",
    "p50": "percentile({f}, 50)",
    "p90": "percentile({f}, 90)",
    "p95": "percentile({f}, 95)",
    "p99": "percentile({f}, 99)",
    "dcount": "dcount({f})",
}
MAX_ANNOTATION_PAGES = 5  # 500 annotations on one chart is more than anyone can read
# The query box's table: at most this many columns and values (rows x columns), so that the page renders in
# milliseconds whatever the result holds; the API returns the whole result.
TABLE_COLUMNS = 40
TABLE_CELLS = 20_000
MAX_SERIES = 8
MAX_FIELD_PAGES = 5
T = TypeVar("T")
NUMERIC = {"long", "real", "int"}


def quote_name(name: str) -> str:
    """A dataset or field name as a bracketed query-language string: `['a.b']`."""
    return "['" + name.replace("\\", "\\\\").replace("'", "\\'") + "']"


def default_query(dataset: str, step_text: str) -> str:
    return f"{quote_name(dataset)} | summarize count() by bin(_time, {step_text})"


def chart_query(dataset: str, step_text: str, fn: str, field_name: str | None) -> str:
    check_choice(fn, FUNCTIONS, "fn")
    if fn != "count" and not field_name:
        raise BeaconError("invalid_parameter", f"`{fn}` summarizes a field: choose one in `field`.", param="field")
    aggregate = FUNCTIONS[fn].format(f=quote_name(field_name or ""))
    return f"{quote_name(dataset)} | summarize {aggregate} by bin(_time, {step_text})"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def query(
    pool: asyncpg.Pool, settings: Settings, who: Principal, apl: str, rng: TimeRange, take: int | None = None
) -> QueryResult:
    body = QueryRequest(apl=apl, start_time=rng.start.isoformat(), end_time=rng.end.isoformat(), take=take)
    return await run_query(pool, settings, who, body)


async def chart_series(
    pool: asyncpg.Pool,
    settings: Settings,
    who: Principal,
    dataset: str,
    rng: TimeRange,
    fn: str,
    field_name: str | None,
) -> tuple[Series, QueryResult]:
    """One value per bucket of the range: the event count, or `fn` of a numeric field."""
    apl = chart_query(dataset, rng.step_text, fn, field_name)
    result = await query(pool, settings, who, apl, rng, take=min(rng.buckets + 1, settings.query_max_rows))
    points = sorted((parse_time(row[0]), _number(row[1])) for row in result.rows if row[0] is not None)
    name = "events" if fn == "count" else f"{fn}({field_name})"
    return Series(name, points), result


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


async def dataset_annotations(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    dataset: str,
    start: datetime,
    end: datetime,
    *,
    monitor_markers: bool = True,
) -> tuple[list[Annotation], bool]:
    """Every annotation of `dataset` that `who` may see overlapping [start, end) (environment-wide ones too: they
    are on every chart), and whether there were more than we show. `monitor_markers=False` leaves Beacon's own
    monitor state-change markers out (a monitor's page draws its own changes from its history)."""
    found: list[Annotation] = []
    cursor: str | None = None
    for _ in range(MAX_ANNOTATION_PAGES):
        page = await list_annotations(
            session,
            codec,
            who,
            datasets=[dataset],
            start_time=start,
            end_time=end,
            type_=None,
            limit=MAX_LIMIT,
            cursor=cursor,
        )
        for a in page.data:
            if not monitor_markers and a.origin == "monitor":
                continue
            found.append(
                Annotation(
                    id=a.id,
                    type=a.type,
                    title=a.title,
                    time=parse_time(a.time),
                    end_time=parse_time(a.end_time) if a.end_time else None,
                    url=a.url,
                    labels=a.labels,
                    silence_id=a.silence_id,
                    environment_wide=a.datasets == ["*"],
                )
            )
        if not page.has_more:
            return found, False
        cursor = page.next_cursor
    return found, True


@dataclass
class ResultView:
    """A query result for the page: its table, and the series to chart when it has a `_time` column."""

    columns: list[str]
    rows: list[list[str]]
    series: list[Series] = field(default_factory=list)
    step_seconds: float = 0.0
    truncated: bool = False
    elapsed_ms: float = 0.0
    warnings: list[ResultWarning] = field(default_factory=list)  # as the API gives them (a misspelt field...)
    # What the result holds beyond the table shown (TABLE_COLUMNS, TABLE_CELLS).
    all_columns: int = 0
    all_rows: int = 0


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return msgspec.json.encode(value).decode()  # exact integers beyond 64 bits, which orjson cannot write


def result_view(result: QueryResult, default_step: timedelta) -> ResultView:
    """The table of a query result, and lines when it can be charted: a datetime `_time` column and at least one
    numeric column; each other (text) column splits the lines into one per value, up to MAX_SERIES."""
    names = [c.name for c in result.columns]
    shown = min(len(names), TABLE_COLUMNS)
    view = ResultView(
        columns=names[:shown],
        rows=[[cell(v) for v in row[:shown]] for row in result.rows[: max(1, TABLE_CELLS // max(1, shown))]],
        truncated=result.status.truncated,
        elapsed_ms=result.status.elapsed_ms,
        warnings=result.warnings,
        all_columns=len(names),
        all_rows=len(result.rows),
    )
    types = {c.name: c.type for c in result.columns}
    if types.get("_time") != "datetime":
        return view
    t_at = names.index("_time")
    numeric = [i for i, c in enumerate(result.columns) if c.type in NUMERIC and i != t_at]
    if not numeric:
        return view
    groups = [i for i, c in enumerate(result.columns) if i != t_at and i not in numeric]
    lines: dict[str, list[tuple[datetime, float | None]]] = {}
    for row in result.rows:
        if row[t_at] is None:
            continue
        t = parse_time(row[t_at])
        label = " · ".join(cell(row[g]) for g in groups)
        for i in numeric:
            name = f"{label} · {names[i]}" if label else names[i]
            if name not in lines and len(lines) >= MAX_SERIES:
                continue
            lines.setdefault(name, []).append((t, _number(row[i])))
    view.series = [Series(name, points) for name, points in lines.items()]
    view.step_seconds = _step_of([p[0] for s in view.series for p in s.points]) or default_step.total_seconds()
    return view


def _step_of(times: Sequence[datetime]) -> float | None:
    """The smallest gap between distinct times: the bucket size of a `bin(_time, ...)` result."""
    distinct = sorted(set(times))
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(distinct)]
    positive = [g for g in gaps if g > 0 and math.isfinite(g)]
    return min(positive) if positive else None


@dataclass
class DatasetView:
    """Everything the dataset page shows besides the layout."""

    series: Series
    numeric_fields: list[str] | None  # None: the token may not list fields
    annotations: list[Annotation] | None  # None: the token may not read annotations
    more_annotations: bool
    query_result: QueryResult | None
    query_error: str | None
    timings: list[tuple[str, float]]


async def dataset_view(
    session: AsyncSession,
    codec: CursorCodec,
    pool: asyncpg.Pool,
    settings: Settings,
    who: Principal,
    ds: Dataset,
    rng: TimeRange,
    *,
    fn: str,
    field_name: str | None,
    q: str | None,
) -> DatasetView:
    """The chart, the fields and annotations, and the query box's result, fetched at the same time: the chart and
    the query each run on their own connection, the listings on the page's session."""
    chart_query(ds.name, rng.step_text, fn, field_name)  # a bad `fn` or `field` fails before anything runs
    timings: list[tuple[str, float]] = []

    async def timed(name: str, work: Awaitable[T]) -> T:
        began = time.perf_counter()
        try:
            return await work
        finally:
            timings.append((name, (time.perf_counter() - began) * 1000))

    async def listings() -> tuple[list[str] | None, list[Annotation] | None, bool]:
        fields = await numeric_fields(session, codec, ds) if who.has_scope("datasets:read") else None
        if not who.has_scope("annotations:read"):
            return fields, None, False
        found, more = await dataset_annotations(session, codec, who, ds.name, rng.start, rng.end)
        return fields, found, more

    async def query_box() -> tuple[QueryResult | None, str | None]:
        if not q:
            return None, None
        try:
            return await query(pool, settings, who, q, rng), None
        except BeaconError as exc:  # shown next to the query box; the rest of the page stands
            return None, exc.message

    try:
        async with asyncio.TaskGroup() as group:
            chart = group.create_task(timed("chart", chart_series(pool, settings, who, ds.name, rng, fn, field_name)))
            side = group.create_task(timed("listings", listings()))
            box = group.create_task(timed("query", query_box()))
    except BaseExceptionGroup as failed:  # the others were cancelled; the page shows the first error
        raise failed.exceptions[0] from None
    fields, annotations, more = side.result()
    result, error = box.result()
    return DatasetView(chart.result()[0], fields, annotations, more, result, error, timings)


async def numeric_fields(session: AsyncSession, codec: CursorCodec, ds: Dataset) -> list[str]:
    """The dataset's fields that have held numbers, by name (the ones a chart can summarize)."""
    names: list[str] = []
    cursor = None
    for _ in range(MAX_FIELD_PAGES):
        page = await list_fields(session, codec, ds, limit=MAX_LIMIT, cursor=cursor)
        names += [f.name for f in page.data if "number" in f.types]
        if not (cursor := page.next_cursor):
            break
    return sorted(names)


@dataclass
class MonitorView:
    monitor: MonitorOut
    timeline: Timeline
    recent: list[MonitorEventOut]  # newest first
    breached: bool | None  # the last value against the threshold; None when there is nothing to compare


OPERATORS = {"above": ">", "above_or_equal": "≥", "below": "<", "below_or_equal": "≤"}
RECENT_EVENTS = 5


def breached(m: MonitorOut) -> bool | None:
    if m.last_value is None or m.threshold is None or m.operator not in OPERATORS:
        return None
    v, t = m.last_value, m.threshold
    return {"above": v > t, "above_or_equal": v >= t, "below": v < t, "below_or_equal": v <= t}[m.operator]


def event_label(e: MonitorEventOut) -> str:
    parts = [e.kind]
    if e.group:
        parts.append(", ".join(f"{k}={cell(v)}" for k, v in e.group.items()))
    if e.value is not None:
        parts.append(f"value {cell(e.value)}")
    if e.match_count is not None:
        parts.append(f"{e.match_count} matching events")
    if e.error:
        parts.append(e.error)
    return " · ".join(parts)


async def monitor_views(
    session: AsyncSession, codec: CursorCodec, who: Principal, rng: TimeRange, *, cursor: str | None
) -> tuple[list[MonitorView], str | None]:
    """A page of the monitors `who` may see, each with its history over the range drawn as a timeline."""
    found = await monitors.list_monitors(session, codec, who, state=None, limit=MAX_LIMIT, cursor=cursor)
    views = []
    for m in found.data:
        history = await monitors.history(session, codec, who, m.id, limit=MAX_LIMIT, cursor=None)
        timeline = monitor_timeline(m, history.data, history.has_more, rng)
        views.append(MonitorView(m, timeline, history.data[:RECENT_EVENTS], breached(m)))
    return views, found.next_cursor


def monitor_timeline(m: MonitorOut, history: Sequence[MonitorEventOut], has_more: bool, rng: TimeRange) -> Timeline:
    """The monitor's states over the range, from its history (newest first, `has_more`: not all of it)."""
    events = [
        HistoryEvent(parse_time(e.time), e.kind, e.state, series_key(e.group) if e.group else "", event_label(e))
        for e in history
    ]
    # The state is known from the monitor's creation (it starts ok), or, with more history than one page,
    # only from the oldest change shown.
    created = parse_time(m.created_at)
    oldest = min((e.time for e in events), default=created)
    known_from = oldest if has_more else min(created, oldest)
    return state_timeline(events, created_at=known_from, start=rng.start, end=rng.end)

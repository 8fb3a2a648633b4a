"""What the console's pages show, gathered from the areas' own services (no SQL of its own).

Charts run through the query service, exactly as `POST /v1/query` would (same access checks, same read-only
transaction and statement timeout); annotations come from the annotations service's overlap listing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.annotations.service import list_annotations
from app.auth import Principal
from app.errors import BeaconError
from app.pagination import MAX_LIMIT, CursorCodec
from app.query.schemas import QueryRequest, QueryResult
from app.query.service import run_query
from app.settings import Settings
from app.ui.charts import Annotation, Series
from app.ui.ranges import TimeRange

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
MAX_SERIES = 8
NUMERIC = {"long", "real", "int"}


def quote_name(name: str) -> str:
    """A dataset or field name as a bracketed query-language string: `['a.b']`."""
    return "['" + name.replace("\\", "\\\\").replace("'", "\\'") + "']"


def default_query(dataset: str, step_text: str) -> str:
    return f"{quote_name(dataset)} | summarize count() by bin(_time, {step_text})"


def chart_query(dataset: str, step_text: str, fn: str, field_name: str | None) -> str:
    if fn not in FUNCTIONS:
        raise BeaconError("invalid_parameter", f"`fn` must be one of {', '.join(FUNCTIONS)}; got {fn!r}.", param="fn")
    if fn != "count" and not field_name:
        raise BeaconError("invalid_parameter", f"`{fn}` summarizes a field: choose one in `field`.", param="field")
    aggregate = FUNCTIONS[fn].format(f=quote_name(field_name or ""))
    return f"{quote_name(dataset)} | summarize {aggregate} by bin(_time, {step_text})"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def query(
    engine: AsyncEngine, settings: Settings, who: Principal, apl: str, rng: TimeRange, take: int | None = None
) -> QueryResult:
    body = QueryRequest(apl=apl, start_time=rng.start.isoformat(), end_time=rng.end.isoformat(), take=take)
    return await run_query(engine, settings, who, body)


async def chart_series(
    engine: AsyncEngine,
    settings: Settings,
    who: Principal,
    dataset: str,
    rng: TimeRange,
    fn: str,
    field_name: str | None,
) -> tuple[Series, QueryResult]:
    """One value per bucket of the range: the event count, or `fn` of a numeric field."""
    apl = chart_query(dataset, rng.step_text, fn, field_name)
    result = await query(engine, settings, who, apl, rng, take=min(rng.buckets + 1, settings.query_max_rows))
    points = sorted((parse_time(row[0]), _number(row[1])) for row in result.rows if row[0] is not None)
    name = "events" if fn == "count" else f"{fn}({field_name})"
    return Series(name, points), result


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


async def dataset_annotations(
    session: AsyncSession, codec: CursorCodec, dataset: str, start: datetime, end: datetime
) -> tuple[list[Annotation], bool]:
    """Every annotation of `dataset` overlapping [start, end), and whether there were more than we show."""
    found: list[Annotation] = []
    cursor: str | None = None
    for _ in range(MAX_ANNOTATION_PAGES):
        page = await list_annotations(
            session,
            codec,
            datasets=[dataset],
            start_time=start,
            end_time=end,
            type_=None,
            limit=MAX_LIMIT,
            cursor=cursor,
        )
        for a in page.data:
            found.append(
                Annotation(
                    id=a.id,
                    type=a.type,
                    title=a.title,
                    time=parse_time(a.time),
                    end_time=parse_time(a.end_time) if a.end_time else None,
                    url=a.url,
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
    return orjson.dumps(value).decode()


def result_view(result: QueryResult, default_step: timedelta) -> ResultView:
    """The table of a query result, and lines when it can be charted: a datetime `_time` column and at least one
    numeric column; each other (text) column splits the lines into one per value, up to MAX_SERIES."""
    names = [c.name for c in result.columns]
    view = ResultView(
        columns=names,
        rows=[[cell(v) for v in row] for row in result.rows],
        truncated=result.status.truncated,
        elapsed_ms=result.status.elapsed_ms,
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

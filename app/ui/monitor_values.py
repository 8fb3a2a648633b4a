"""A threshold monitor's value over time, for its console page: the monitor's own query, summarized by windows
of its `range_seconds` as well, so each point is the value an evaluation of that window would see (the worst
over the monitor's groups and time bins, as app/monitors/evaluation.py takes it).

The query is the monitor's, compiled by the query area's compiler and run on the query pool (its statement
timeout holds); only a `bin(_time, range)` is added in front of the final `summarize`'s `by`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg

from app.access import require_dataset
from app.auth import Principal
from app.db.reads import read_connection
from app.monitors.queries import parsed
from app.monitors.schemas import MonitorOut
from app.query import ast
from app.query.compiler import Compiled
from app.query.errors import QueryError
from app.query.render import table_result
from app.ui.charts import Point
from app.ui.ranges import floor_to

MAX_WINDOWS = 1500  # points on one chart; a longer range shows its most recent windows
MAX_ROWS = 50_000  # windows x groups x the query's own time bins
WINDOW = "_beacon_window"


@dataclass
class ValueSeries:
    points: list[Point]  # (window start, the value over the window)
    start: datetime  # the first window's start (later than asked when the range holds too many windows)
    window: timedelta
    error: str | None = None


def windowed(query: ast.Query, window: timedelta) -> tuple[ast.Query, int]:
    """The query summarized by windows as well, and the column of its value (the first aggregation)."""
    last = query.operators[-1]
    assert isinstance(last, ast.Summarize)
    binned = ast.Call("bin", (ast.Field("_time", 0), ast.Literal("timespan", window, 0)), 0)
    by = (ast.Named(WINDOW, binned, 0), *last.by)
    summarize = ast.Summarize(last.aggregates, by, 0)
    return ast.Query(query.dataset, query.dataset_pos, (*query.operators[:-1], summarize)), len(by)


def _worst(operator: str | None, values: list[float]) -> float:
    return min(values) if (operator or "").startswith("below") else max(values)


async def value_series(
    pool: asyncpg.Pool, who: Principal, m: MonitorOut, start: datetime, end: datetime, now: datetime
) -> ValueSeries:
    window = timedelta(seconds=m.range_seconds)
    # Windows aligned as bin() aligns them; never more than MAX_WINDOWS of them.
    first = max(floor_to(start, window), floor_to(end, window) - window * (MAX_WINDOWS - 1))
    series = ValueSeries([], first, window)
    require_dataset(who, m.dataset)
    try:
        query, value_at = windowed(parsed(m.apl), window)
        compiled = Compiled(query, now=now, start=first, end=end)
        async with read_connection(pool) as conn:
            # The id first, then the statement by it (on Citus: to the dataset's shard alone).
            dataset_id = await conn.fetchval("SELECT id FROM datasets WHERE name = $1", m.dataset)
            if dataset_id is None:
                return series  # no events yet: nothing to draw
            statement = compiled.statement(dataset_id, limit=MAX_ROWS + 1, newest_first=False, json_text=False)
            records = await conn.fetch(statement.sql, *statement.args)
        _, rows = table_result(records[:MAX_ROWS], statement.layout)
    except (QueryError, asyncpg.PostgresError, OverflowError) as exc:
        series.error = f"The monitor's value over time cannot be drawn: {exc}"
        return series
    if len(records) > MAX_ROWS:  # too many groups x bins: the windows drawn may miss some of them
        series.error = f"The monitor's query gives more than {MAX_ROWS:,} rows over this range; narrow the range."
    by_window: dict[datetime, list[float]] = {}
    for row in rows:
        t, value = row[0], row[value_at]
        if not isinstance(t, str) or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        by_window.setdefault(datetime.fromisoformat(t), []).append(float(value))
    series.points = sorted((t, _worst(m.operator, vs)) for t, vs in by_window.items())
    return series

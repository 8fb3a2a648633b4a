"""Counts from the per-minute rollup (`event_rollups`) instead of the events, when that gives the same answer.

Served this way, with nothing else in the query: `summarize count() by bin(_time, S)` where S is a whole
number of minutes (optionally followed by a `sort` on that column and a `take`), `summarize count()` and
`count`. Every bin of S minutes since 1970 is made of whole minutes, so the minutes inside the range add up to
exactly what counting the events gives; the range's partial minutes at either end (a range such as `now-24h`
rarely starts on a minute) are counted from the events, at most two minutes of them. The rollup is written by
ingest in the same transaction as the events, and removed with them (app/ingest/rollups.py), so it never
disagrees with them. A 24 h chart reads 1,440 rollup rows instead of every event of the day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.query import ast
from app.query.compiler import DATASET_PARAM, Compiled, Statement
from app.query.functions import EPOCH
from app.query.plan import TIME

MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Shape:
    span: timedelta | None  # the bin size; None: one total count
    descending: bool | None = None  # a `sort` on the bin column
    take: int | None = None


def _is_count(named: ast.Named) -> bool:
    expr = named.expr
    return isinstance(expr, ast.Call) and expr.name == "count" and not expr.args


def _minutes_bin(named: ast.Named) -> timedelta | None:
    """S when the column is `bin(_time, S)` (or `floor`) with S a literal whole number of minutes."""
    expr = named.expr
    if not (isinstance(expr, ast.Call) and expr.name in ("bin", "floor") and len(expr.args) == 2):
        return None
    x, span = expr.args
    if not (isinstance(x, ast.Field) and x.name == TIME):
        return None
    if not (isinstance(span, ast.Literal) and span.kind == "timespan" and isinstance(span.value, timedelta)):
        return None
    if span.value < MINUTE or span.value % MINUTE:
        return None
    return span.value


def shape_of(query: ast.Query, column: str | None) -> Shape | None:
    """The query's shape when the rollup can answer it; `column` is the name of its bin column."""
    ops = query.operators
    if len(ops) == 1 and isinstance(ops[0], ast.Count):
        return Shape(None)
    if not ops or not isinstance(ops[0], ast.Summarize):
        return None
    first = ops[0]
    if len(first.aggregates) != 1 or not _is_count(first.aggregates[0]):
        return None
    if not first.by:
        return Shape(None) if len(ops) == 1 else None
    if len(first.by) != 1:
        return None
    span = _minutes_bin(first.by[0])
    if span is None:
        return None
    descending: bool | None = None
    take: int | None = None
    rest = list(ops[1:])
    if rest and isinstance(rest[0], ast.Sort):
        keys = rest.pop(0).keys  # type: ignore[union-attr]
        if len(keys) != 1 or not (isinstance(keys[0].expr, ast.Field) and keys[0].expr.name == column):
            return None
        descending = keys[0].descending
    if rest and isinstance(rest[0], ast.Take):
        take = rest.pop(0).count  # type: ignore[union-attr]
    if rest:
        return None
    return Shape(span, descending, take)


def _ceil_minute(t: datetime) -> datetime:
    floor = t.replace(second=0, microsecond=0)
    return floor if floor == t else floor + MINUTE


def rollup_statement(compiled: Compiled, events: Statement, limit: int, dataset_id: int) -> Statement | None:
    """The statement reading the rollup for `compiled` (whose events statement is `events`: same columns,
    same layout), or None when the rollup cannot give the same answer. `$1` is the dataset's id, as in `events`."""
    layout = events.layout
    column = layout.columns[0].name if layout.columns else None
    shape = shape_of(compiled.query, column)
    if shape is None:
        return None
    start, end = compiled.start, compiled.end
    low = None if start is None else _ceil_minute(start)
    high = None if end is None else end.replace(second=0, microsecond=0)
    if low is not None and high is not None and low >= high:
        return None  # under a minute or two: counting the events is as cheap
    args: list[Any] = [dataset_id]

    def arg(value: Any, pg_type: str) -> str:
        args.append(value)
        return f"${len(args)}::{pg_type}"

    dataset = DATASET_PARAM
    rollup_where = [f"dataset_id = {dataset}"]
    if low is not None:
        rollup_where.append(f"minute >= {arg(low, 'timestamptz')}")
    if high is not None:
        rollup_where.append(f"minute < {arg(high, 'timestamptz')}")
    edges: list[str] = []  # the events of the partial minutes at either end
    if start is not None and low is not None and start < low:
        edges.append(f"time >= {arg(start, 'timestamptz')} AND time < {arg(low, 'timestamptz')}")
    if end is not None and high is not None and high < end:
        edges.append(f"time >= {arg(high, 'timestamptz')} AND time < {arg(end, 'timestamptz')}")
    rollup_sql = " AND ".join(rollup_where)
    if shape.span is None:
        parts = [f"(SELECT sum(count) FROM event_rollups WHERE {rollup_sql})"]
        parts += [f"(SELECT count(*) FROM events WHERE dataset_id = {dataset} AND {edge})" for edge in edges]
        sql = "SELECT (" + " + ".join(f"coalesce({p}, 0)" for p in parts) + ")::bigint"
        return Statement(sql, args, layout)
    span = arg(shape.span, "interval")
    selects = [f"SELECT date_bin({span}, minute, {EPOCH}) AS b, count AS n FROM event_rollups WHERE {rollup_sql}"]
    selects += [
        f"SELECT date_bin({span}, time, {EPOCH}) AS b, count(*) AS n FROM events"
        f" WHERE dataset_id = {dataset} AND {edge} GROUP BY 1"
        for edge in edges
    ]
    direction = "DESC" if shape.descending else "ASC"
    rows = limit if shape.take is None else min(limit, shape.take)
    sql = (
        f"SELECT b, sum(n)::bigint FROM ({' UNION ALL '.join(selects)}) AS r"
        f" GROUP BY b ORDER BY b {direction} LIMIT {arg(rows, 'bigint')}"
    )
    return Statement(sql, args, layout)

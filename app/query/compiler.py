"""A parsed query to one parameterised SQL statement, and the layout its rows come back in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.query import ast
from app.query.plan import TIME, OrderKey, Planner
from app.query.types import Params, T, Typed

# $1 is always the dataset id, given after compiling, so type errors need no database. It is a parameter, never
# looked up inside the statement: on Citus, where events are distributed by dataset_id, a parameter routes the
# statement to the dataset's shard, a subquery for it would send it to every shard.
DATASET_PARAM = "$1::integer"


@dataclass(frozen=True)
class OutColumn:
    name: str
    type: T
    array: bool = False  # an SQL array of `type` values


@dataclass(frozen=True)
class Layout:
    """How a result row is laid out. Table results: `columns`, one SQL column each. Raw event results: the
    event time (unless removed), then the event's fields as one JSON object, then the `extended` columns.
    `json_text`: JSON values (the events' fields, `dynamic` columns) come as text, else parsed (JSONB on the
    query pool, app/db/reads.py)."""

    raw: bool
    columns: tuple[OutColumn, ...]
    time: OutColumn | None = None
    extended: tuple[OutColumn, ...] = ()
    json_text: bool = True


@dataclass(frozen=True)
class Statement:
    sql: str
    args: list[Any]
    layout: Layout


def _out(t: Typed, json_text: bool) -> str:
    return f"({t.sql})::text" if json_text and t.type is T.DYNAMIC and not t.array else t.sql


class Compiled:
    def __init__(self, query: ast.Query, *, now: datetime, start: datetime | None, end: datetime | None) -> None:
        self.query = query
        self.start = start
        self.end = end
        self.params = Params()
        placeholder = self.params.add(0, "integer")  # the dataset id, filled in by `statement`
        assert placeholder == DATASET_PARAM
        planner = Planner(self.params, now)
        rel = planner.base(DATASET_PARAM, start, end)
        for op in query.operators:
            rel = planner.apply(rel, op)
        self.planner = planner
        self.rel = rel

    @property
    def fields(self) -> dict[str, int]:
        """The event fields the query names (not its computed columns), each with its first position."""
        return self.planner.fields

    @property
    def query_limit(self) -> int | None:
        """The row limit the query itself ends with (`take`, `limit`, `top`), if any."""
        return self.rel.limit

    @property
    def sorts(self) -> bool:
        """Whether the query orders its rows itself (`sort`, `order by`, `top`)."""
        return bool(self.rel.order)

    def statement(self, dataset_id: int, *, limit: int | None, newest_first: bool, json_text: bool = True) -> Statement:
        """The SQL with `limit` rows at most (on top of the query's own), over the dataset with this id.
        `newest_first`: rows that are events (not aggregated), without a `sort`, come newest first.

        `json_text`: JSON values as text (`::text`), else as JSONB, which only the query pool's sessions hand
        over parsed (app/db/reads.py). Text can be passed on without parsing (an export's events), but
        PostgreSQL casts every row it sorts, not only those returned: `top 10` over a million events took
        2.8 times as long for it."""
        rel = self.rel
        params = self.params.copy()  # the limit and removed names belong to this statement only
        select: list[str] = []
        if rel.raw:
            time = None if TIME in rel.hidden else rel.cols[TIME]
            if time is not None:
                select.append(_out(time, json_text))
            data = rel.data
            if rel.hidden:
                data = f"({data} - {params.add(sorted(rel.hidden), 'text[]')})"
            select.append(f"({data})::text" if json_text else data)
            extended = [(name, rel.cols[name]) for name in rel.extended]
            select.extend(_out(t, json_text) for _, t in extended)
            layout = Layout(
                raw=True,
                columns=(),
                time=None if time is None else OutColumn(TIME, time.type),
                extended=tuple(OutColumn(n, t.type, t.array) for n, t in extended),
                json_text=json_text,
            )
        else:
            select.extend(_out(t, json_text) for t in rel.cols.values())
            layout = Layout(
                raw=False,
                columns=tuple(OutColumn(n, t.type, t.array) for n, t in rel.cols.items()),
                json_text=json_text,
            )
        order = rel.order
        if not order and newest_first and rel.base_time is not None and rel.group is None:
            order = [OrderKey(rel.base_time, True, None, True)]
        effective = rel.limit if limit is None else limit if rel.limit is None else min(limit, rel.limit)
        sql = self.planner.select_sql(rel, select, order=order, limit=effective, params=params)
        args = list(params.values)
        args[0] = dataset_id
        sql, args = _compact(sql, args)
        return Statement(sql, args, layout)


_PLACEHOLDER = re.compile(r"\$(\d+)::")


def _compact(sql: str, args: list[Any]) -> tuple[str, list[Any]]:
    """Renumber the parameters the SQL uses: a literal compiled into another form (a number compared with a
    JSON field becomes a JSONB parameter) leaves its first parameter unused, and PostgreSQL rejects a
    statement with a parameter it cannot type. Only our own `$n::type` placeholders match: no text from
    the query is ever part of the SQL."""
    mapping: dict[str, int] = {}
    used: list[Any] = []

    def renumber(match: re.Match[str]) -> str:
        old = match.group(1)
        if old not in mapping:
            used.append(args[int(old) - 1])
            mapping[old] = len(used)
        return f"${mapping[old]}::"

    return _PLACEHOLDER.sub(renumber, sql), used

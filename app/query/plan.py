"""Tabular operators to one SQL statement over the `events` table.

A `Rel` is the SELECT being built: its FROM, WHERE, GROUP BY, ORDER BY, LIMIT and the columns in scope.
Operators add to it as long as SQL's clause order allows (`where` after `take` does not), otherwise the
current SELECT becomes a subquery (`wrap`). The dataset and the time range are the innermost WHERE, as
plain `dataset_id = $1 AND time >= $2 AND time < $3`, so partition pruning and the `(dataset_id, time)` index
apply whatever the pipeline does. Column names chosen by the user never appear in the SQL: columns are
aliased `c1, c2, ...` and named again when the result is rendered.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from datetime import datetime

from app.query import ast
from app.query.coerce import boolean
from app.query.errors import QueryError
from app.query.expressions import Ctx, compile_expr, name_part, safe_name_part
from app.query.functions import AGGREGATIONS, compile_call
from app.query.types import Params, T, Typed

TIME = "_time"
SYS_TIME = "_sysTime"


@dataclass(frozen=True)
class OrderKey:
    sql: str
    descending: bool
    nulls_first: bool | None
    not_null: bool

    def render(self) -> str:
        text = f"{self.sql} {'DESC' if self.descending else 'ASC'}"
        if self.not_null:  # plain `time DESC` lets the planner walk the (dataset_id, time) index backwards
            return text
        # The language's defaults: nulls first when ascending, last when descending.
        first = (not self.descending) if self.nulls_first is None else self.nulls_first
        return f"{text} NULLS {'FIRST' if first else 'LAST'}"


@dataclass
class Rel:
    raw: bool  # True while rows are whole events whose fields are known only at run time
    cols: dict[str, Typed]  # raw: _time, _sysTime and extended columns; table: the output columns
    source: str
    where: list[str]
    group: list[str] | None = None  # None: not aggregated; []: one global aggregate row
    order: list[OrderKey] = field(default_factory=list)
    limit: int | None = None
    data: str = "data"  # raw: the JSONB of the event's fields
    base_time: str | None = "time"  # the event time while rows are events (not aggregated): newest first
    extended: list[str] = field(default_factory=list)  # raw: extended column names, in output order
    hidden: frozenset[str] = frozenset()  # raw: names removed by project-away


class _Aliases:
    def __init__(self) -> None:
        self._n = itertools.count(1)

    def col(self) -> str:
        return f"c{next(self._n)}"

    def table(self) -> str:
        return f"t{next(self._n)}"


class Planner:
    def __init__(self, params: Params, now: datetime) -> None:
        self.params = params
        self.now = now
        self.aliases = _Aliases()
        # Event fields the query names (name -> position of its first mention): app/query/fieldcheck.py
        # warns about those its dataset has never had.
        self.fields: dict[str, int] = {}

    # ---- scope ----------------------------------------------------------------------------------------

    def ctx(self, rel: Rel, *, allow_agg: bool = False, sets: bool = False) -> Ctx:
        """`sets`: a typed set (make_set of strings, datetimes, ...) stays an SQL array, for a column that is
        only passed on; inside an expression it is a JSON array, which every function and operator reads."""

        def resolve(name: str, pos: int) -> Typed:
            if rel.raw:
                if name in rel.hidden:
                    raise QueryError(f"'{name}' was removed by project-away", pos)
                if name in rel.cols:
                    return rel.cols[name]
                self.fields.setdefault(name, pos)
                key = self.params.add(name, "text")
                return Typed(f"({rel.data} -> {key})", T.DYNAMIC, field=name, key=key, data=rel.data)
            if name in rel.cols:
                found = rel.cols[name]
                if found.array and not sets:
                    return Typed(f"to_jsonb({found.sql})", T.DYNAMIC, agg=found.agg)
                return found
            known = ", ".join(rel.cols) or "none"
            raise QueryError(f"unknown column '{name}' (the columns here are: {known})", pos)

        return Ctx(self.params, self.now, resolve, compile_call, allow_agg=allow_agg)

    def expr(self, node: ast.Expr, rel: Rel, *, allow_agg: bool = False) -> Typed:
        """A column's (or a sort key's) expression; a column named alone is taken as it is."""
        if isinstance(node, ast.Field) and not allow_agg:
            return self.ctx(rel, sets=True).resolve(node.name, node.pos)
        return _materialize(compile_expr(node, self.ctx(rel, allow_agg=allow_agg)))

    # ---- the pipeline ---------------------------------------------------------------------------------

    def base(self, dataset_param: str, start: datetime | None, end: datetime | None) -> Rel:
        where = [f"dataset_id = {dataset_param}"]
        if start is not None:
            where.append(f"time >= {self.params.add(start, 'timestamptz')}")
        if end is not None:
            where.append(f"time < {self.params.add(end, 'timestamptz')}")
        cols = {
            TIME: Typed("time", T.DATETIME, not_null=True),
            SYS_TIME: Typed("sys_time", T.DATETIME, not_null=True),
        }
        return Rel(raw=True, cols=cols, source="events", where=where)

    def apply(self, rel: Rel, op: ast.Operator) -> Rel:
        if isinstance(op, ast.Where):
            if rel.limit is not None or rel.group is not None:
                rel = self.wrap(rel)
            pred = boolean(compile_expr(op.predicate, self.ctx(rel)), op.predicate.pos, "'where'")
            return replace(rel, where=[*rel.where, pred.sql])
        if isinstance(op, ast.Extend):
            return self._extend(rel, op)
        if isinstance(op, ast.Project):
            cols = self._named(rel, op.items, "project")
            return replace(rel, raw=False, cols=cols, extended=[], hidden=frozenset())
        if isinstance(op, ast.ProjectAway):
            return self._project_away(rel, op)
        if isinstance(op, ast.Summarize):
            return self._summarize(rel, op.aggregates, op.by, op.pos)
        if isinstance(op, ast.Distinct):
            return self._summarize(rel, (), op.items, op.pos)
        if isinstance(op, ast.Count):
            if rel.limit is not None or rel.group is not None:
                rel = self.wrap(rel, keep_order=False)
            cols = {"Count": Typed("count(*)", T.LONG, agg=True)}
            return replace(
                rel, raw=False, cols=cols, group=[], order=[], extended=[], hidden=frozenset(), base_time=None
            )
        if isinstance(op, ast.Sort):
            if rel.limit is not None:
                rel = self.wrap(rel, keep_order=False)
            return replace(rel, order=[self._order_key(rel, k) for k in op.keys])
        if isinstance(op, ast.Take):
            return replace(rel, limit=op.count if rel.limit is None else min(rel.limit, op.count))
        if isinstance(op, ast.Top):
            if rel.limit is not None:
                rel = self.wrap(rel, keep_order=False)
            return replace(rel, order=[self._order_key(rel, op.key)], limit=op.count)
        raise AssertionError(op)

    def _order_key(self, rel: Rel, key: ast.SortKey) -> OrderKey:
        typed = self.expr(key.expr, rel)
        return OrderKey(typed.sql, key.descending, key.nulls_first, typed.not_null)

    def _extend(self, rel: Rel, op: ast.Extend) -> Rel:
        cols = dict(rel.cols)
        extended = list(rel.extended)
        hidden = set(rel.hidden)
        counter = itertools.count(1)
        for item in op.items:
            # Later items see the earlier ones: `extend a = x * 2, b = a + 1`.
            scope = replace(rel, cols=cols, hidden=frozenset(hidden))
            typed = self.expr(item.expr, scope)
            name = item.name or _derived(item.expr, cols, counter)
            cols[name] = typed
            if rel.raw:
                hidden.discard(name)
                if name not in (TIME, SYS_TIME) and name not in extended:
                    extended.append(name)
        return replace(rel, cols=cols, extended=extended, hidden=frozenset(hidden))

    def _named(
        self,
        rel: Rel,
        items: tuple[ast.Named, ...],
        what: str,
        *,
        taken: dict[str, Typed] | None = None,
        aggregates: bool = False,
    ) -> dict[str, Typed]:
        """Columns for `project`, `distinct` and `summarize`: every item sees the input, not its siblings."""
        taken = dict(taken or {})
        cols: dict[str, Typed] = {}
        counter = itertools.count(1)
        for item in items:
            typed = self.expr(item.expr, rel, allow_agg=aggregates)
            if aggregates and not typed.agg:
                raise QueryError("'summarize' needs an aggregation such as count() or avg(x)", item.pos)
            if item.name is not None:
                if item.name in taken:
                    raise QueryError(f"duplicate column name '{item.name}' in '{what}'", item.pos)
                name = item.name
            else:
                name = _derived(item.expr, taken, counter)
            cols[name] = taken[name] = typed
        return cols

    def _project_away(self, rel: Rel, op: ast.ProjectAway) -> Rel:
        cols = dict(rel.cols)
        if rel.raw:
            extended = [n for n in rel.extended if n not in {f.name for f in op.names}]
            for f in op.names:
                if f.name in rel.extended:
                    del cols[f.name]
                elif f.name not in cols:
                    self.fields.setdefault(f.name, f.pos)
            return replace(rel, cols=cols, extended=extended, hidden=rel.hidden | {f.name for f in op.names})
        for f in op.names:
            if f.name not in cols:
                raise QueryError(f"unknown column '{f.name}' (the columns here are: {', '.join(cols)})", f.pos)
            del cols[f.name]
        if not cols:
            raise QueryError("'project-away' would remove every column", op.pos)
        return replace(rel, cols=cols)

    def _summarize(self, rel: Rel, aggregates: tuple[ast.Named, ...], by: tuple[ast.Named, ...], pos: int) -> Rel:
        if rel.limit is not None or rel.group is not None:
            rel = self.wrap(rel, keep_order=False)
        # The grouped columns are read as what they are in the result: an event field's cheaper forms over the
        # whole `data` (`data ->> key`, `data @> ...`) are not grouped expressions, and PostgreSQL refuses them.
        by_cols = {
            name: replace(t, field=None, key=None, data=None) for name, t in self._named(rel, by, "summarize").items()
        }
        agg_cols = self._named(rel, aggregates, "summarize", taken=by_cols, aggregates=True)
        group = [t.sql for t in by_cols.values()]
        cols = {**by_cols, **agg_cols}  # the language's order: the `by` columns first
        return replace(
            rel,
            raw=False,
            cols=cols,
            group=group,
            order=[],
            limit=None,
            extended=[],
            hidden=frozenset(),
            base_time=None,
        )

    # ---- SQL text -------------------------------------------------------------------------------------

    def wrap(self, rel: Rel, *, keep_order: bool = True) -> Rel:
        """The current SELECT as a subquery; the new scope reads its columns (and keeps its order)."""
        alias = self.aliases.table()
        select: list[str] = []

        def carry(sql: str) -> str:
            col = self.aliases.col()
            select.append(f"{sql} AS {col}")
            return f"{alias}.{col}"

        cols = {
            name: replace(t, sql=carry(t.sql), agg=False, field=None, key=None, data=None)
            for name, t in rel.cols.items()
        }
        data = carry(rel.data) if rel.raw else rel.data
        base_time = carry(rel.base_time) if rel.base_time is not None and rel.group is None else None
        order = [replace(k, sql=carry(k.sql)) for k in rel.order] if keep_order else []
        inner = self.select_sql(rel, select, order=rel.order if rel.limit is not None else [], limit=rel.limit)
        return Rel(
            raw=rel.raw,
            cols=cols,
            source=f"({inner}) AS {alias}",
            where=[],
            order=order,
            data=data,
            base_time=base_time,
            extended=list(rel.extended),
            hidden=rel.hidden,
        )

    def select_sql(
        self, rel: Rel, select: list[str], *, order: list[OrderKey], limit: int | None, params: Params | None = None
    ) -> str:
        sql = f"SELECT {', '.join(select) or 'NULL'} FROM {rel.source}"
        if rel.where:
            sql += " WHERE " + " AND ".join(rel.where)
        if rel.group:
            sql += " GROUP BY " + ", ".join(rel.group)
        if order:
            sql += " ORDER BY " + ", ".join(k.render() for k in order)
        if limit is not None:
            sql += f" LIMIT {(params or self.params).add(limit, 'bigint')}"
        return sql


def _materialize(t: Typed) -> Typed:
    """A bare `null` becomes a typed NULL so that it can be a column."""
    return Typed("NULL::jsonb", T.DYNAMIC) if t.type is T.NULL else t


def _unique(name: str, taken: dict[str, Typed]) -> str:
    if name not in taken:
        return name
    for i in itertools.count(1):
        if f"{name}{i}" not in taken:
            return f"{name}{i}"
    raise AssertionError  # pragma: no cover


def _derived(node: ast.Expr, taken: dict[str, Typed], counter: itertools.count[int]) -> str:
    """The name of an unnamed column: a field keeps its name, `bin(_time, 1m)` is `_time`, `avg(duration_ms)`
    is `avg_duration_ms`, `count()` is `count_`; anything else is Column1, Column2, ..."""
    if isinstance(node, ast.Field):
        return _unique(node.name, taken)
    if isinstance(node, ast.Call) and node.args:
        first = name_part(node.args[0])
        if node.name in ("bin", "floor") and first is not None:
            return _unique(first, taken)
        if node.name in AGGREGATIONS:
            suffix = safe_name_part(first) if first is not None else ""
            if node.name == "percentile" and len(node.args) == 2 and isinstance(node.args[1], ast.Literal):
                suffix += "_" + safe_name_part(str(node.args[1].value))
            return _unique(f"{node.name}_{suffix}", taken)
    if isinstance(node, ast.Call) and node.name in AGGREGATIONS:
        return _unique(f"{node.name}_", taken)
    while True:
        name = f"Column{next(counter)}"
        if name not in taken:
            return name

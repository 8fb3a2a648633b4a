"""Scalar functions (bin, ago, now, isnull, tostring, toint, ...) and aggregations (count, avg, ...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from app.query import ast
from app.query.coerce import boolean, describe, dyn_as, dyn_text, is_null, number, text
from app.query.errors import QueryError
from app.query.expressions import Ctx, compile_expr
from app.query.types import INTEGRAL, NUMERIC, PG_TYPE, T, Typed

AGGREGATIONS = ("count", "countif", "sum", "avg", "min", "max", "dcount", "percentile", "make_set")
EPOCH = "TIMESTAMPTZ '1970-01-01 00:00:00+00'"
# Text that casts to bigint / float8 without error: guards toint()/todouble() on strings. Only the spaces the
# casts skip (`\s` also matches other spaces, which they refuse); a number of at most _NUMBER_CHARS characters
# with a two-digit exponent neither overflows float8 nor underflows to zero (both are errors of the cast).
_SPACE = r"[ \t\n\r\f\v]*"
_INTEGER_TEXT = rf"'^{_SPACE}[-+]?[0-9]{{1,18}}{_SPACE}$'"
_NUMBER_TEXT = rf"'^{_SPACE}[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{{1,2}})?{_SPACE}$'"
_NUMBER_CHARS = 200
# float8 values that fit in bigint when truncated.
_BIGINT_RANGE = "-9.2e18 AND 9.2e18"


def _arity(node: ast.Call, *counts: int) -> None:
    if len(node.args) not in counts:
        want = " or ".join(str(c) for c in counts)
        plural = "" if counts == (1,) else "s"
        raise QueryError(f"{node.name}() takes {want} argument{plural}, got {len(node.args)}", node.pos)


def _timespan_const(node: ast.Expr, ctx: Ctx, what: str) -> timedelta:
    if isinstance(node, ast.Literal) and node.kind == "timespan":
        return node.value  # type: ignore[return-value]
    raise QueryError(f"{what} needs a timespan literal such as 5m or 1h", node.pos)


def compile_call(node: ast.Call, ctx: Ctx) -> Typed:
    name = node.name
    if name in AGGREGATIONS:
        return _aggregation(node, ctx)
    fn = _SCALARS.get(name)
    if fn is None:
        known = ", ".join(sorted([*_SCALARS, *AGGREGATIONS]))
        raise QueryError(f"unknown function '{name}' (known: {known})", node.pos)
    return fn(node, ctx)


# ---- scalar functions ---------------------------------------------------------------------------------


def _now(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 0)
    # The request's `now`, fixed once and bound: the planner can prune partitions with it.
    return Typed(ctx.params.add(ctx.now, "timestamptz"), T.DATETIME, const=ctx.now, not_null=True)


def _ago(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    try:
        value = ctx.now - _timespan_const(node.args[0], ctx, "ago()")
    except OverflowError:
        raise QueryError(
            "ago() is out of range: the time it names must fall in the years 1 to 9999", node.pos
        ) from None
    return Typed(ctx.params.add(value, "timestamptz"), T.DATETIME, const=value, not_null=True)


MAX_BIN = timedelta(days=3_652_500)


def _bin(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 2)
    x = compile_expr(node.args[0], ctx)
    span_node = node.args[1]
    if x.type is T.DATETIME:
        span = _timespan_const(span_node, ctx, "bin() of a datetime")
        if span <= timedelta(0):
            raise QueryError("bin() needs a positive timespan", span_node.pos)
        if span > MAX_BIN:
            # PostgreSQL's date_bin fails on it with a message that depends on its version (15: "interval out
            # of range", 16: "stride must be greater than zero"); no time is that far from another anyway.
            raise QueryError(
                f"bin() of a datetime takes a timespan of at most {MAX_BIN.days:,}d (10,000 years, more than "
                "every time there is)",
                span_node.pos,
            )
        placeholder = ctx.params.add(span, "interval")
        return Typed(f"date_bin({placeholder}, {x.sql}, {EPOCH})", T.DATETIME, agg=x.agg, not_null=x.not_null)
    n = number(x, node.args[0].pos, "bin()")
    size = compile_expr(span_node, ctx)
    if not (size.is_const and size.type in NUMERIC) or size.const <= 0:
        raise QueryError("bin() of a number needs a positive number as its bin size", span_node.pos)
    if n.type in INTEGRAL and size.type in INTEGRAL:
        return Typed(f"(floor({n.sql}::numeric / {size.sql})::bigint * {size.sql})", T.LONG, agg=x.agg)
    return Typed(f"(floor({n.sql} / {size.sql}) * {size.sql})", T.REAL, agg=x.agg)


def _isnull(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    x = compile_expr(node.args[0], ctx)
    sql = is_null(x)
    return Typed(sql if node.name == "isnull" else f"(NOT {sql})", T.BOOL, agg=x.agg)


def _isempty(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    x = compile_expr(node.args[0], ctx)
    s = text(x, node.args[0].pos, f"{node.name}()")
    sql = f"COALESCE({s.sql} = '', true)"
    return Typed(sql if node.name == "isempty" else f"(NOT {sql})", T.BOOL, agg=x.agg)


def _tostring(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    x = compile_expr(node.args[0], ctx)
    if x.type is T.DATETIME:
        return Typed(f"to_char({x.sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')", T.STRING, agg=x.agg)
    if x.type is T.TIMESPAN:
        return Typed(f"({x.sql})::text", T.STRING, agg=x.agg)
    return text(x, node.args[0].pos, "tostring()")


def _tolong(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    x = compile_expr(node.args[0], ctx)
    out = T.INT if node.name == "toint" else T.LONG
    if x.type in INTEGRAL:
        return Typed(x.sql, out, agg=x.agg)
    if x.type is T.REAL:
        return Typed(f"(CASE WHEN {x.sql} BETWEEN {_BIGINT_RANGE} THEN trunc({x.sql})::bigint END)", out, agg=x.agg)
    if x.type is T.BOOL:
        return Typed(f"({x.sql})::int::bigint", out, agg=x.agg)
    if x.type is T.STRING:
        return Typed(_string_to_long(x.sql), out, agg=x.agg)
    if x.type is T.DYNAMIC:
        num = dyn_as(x, "number")
        s = dyn_text(x)
        return Typed(
            f"(CASE jsonb_typeof({x.sql}) "
            f"WHEN 'number' THEN CASE WHEN {num} BETWEEN {_BIGINT_RANGE} THEN trunc({num})::bigint END "
            f"WHEN 'string' THEN {_string_to_long(s)} "
            f"WHEN 'boolean' THEN ({x.sql})::boolean::int::bigint END)",
            out,
            agg=x.agg,
        )
    if x.type is T.NULL:
        return Typed("NULL::bigint", out)
    raise QueryError(f"{node.name}() cannot convert {describe(x.type)}", node.args[0].pos)


def _string_to_long(s: str) -> str:
    # Nested CASE, not AND: PostgreSQL does not promise to test the pattern before trying the cast.
    return (
        f"(CASE WHEN {s} ~ {_INTEGER_TEXT} THEN ({s})::bigint "
        f"WHEN length({s}) <= {_NUMBER_CHARS} AND {s} ~ {_NUMBER_TEXT} "
        f"THEN CASE WHEN ({s})::float8 BETWEEN {_BIGINT_RANGE} THEN trunc(({s})::float8)::bigint END END)"
    )


def _string_to_double(s: str) -> str:
    return f"(CASE WHEN length({s}) <= {_NUMBER_CHARS} AND {s} ~ {_NUMBER_TEXT} THEN ({s})::float8 END)"


def _todouble(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    x = compile_expr(node.args[0], ctx)
    if x.type in NUMERIC:
        return Typed(f"({x.sql})::float8", T.REAL, agg=x.agg)
    if x.type is T.BOOL:
        return Typed(f"({x.sql})::int::float8", T.REAL, agg=x.agg)
    if x.type is T.STRING:
        return Typed(_string_to_double(x.sql), T.REAL, agg=x.agg)
    if x.type is T.DYNAMIC:
        return Typed(
            f"(CASE jsonb_typeof({x.sql}) WHEN 'number' THEN ({x.sql})::float8 "
            f"WHEN 'string' THEN {_string_to_double(dyn_text(x))} "
            f"WHEN 'boolean' THEN ({x.sql})::boolean::int::float8 END)",
            T.REAL,
            agg=x.agg,
        )
    if x.type is T.NULL:
        return Typed("NULL::float8", T.REAL)
    raise QueryError(f"{node.name}() cannot convert {describe(x.type)}", node.args[0].pos)


def _string_fn(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 1)
    x = compile_expr(node.args[0], ctx)
    s = text(x, node.args[0].pos, f"{node.name}()")
    if node.name == "strlen":
        return Typed(f"length({s.sql})::bigint", T.LONG, agg=x.agg)
    return Typed(f"{'lower' if node.name == 'tolower' else 'upper'}({s.sql})", T.STRING, agg=x.agg)


def _iff(node: ast.Call, ctx: Ctx) -> Typed:
    _arity(node, 3)
    cond = boolean(compile_expr(node.args[0], ctx), node.args[0].pos, f"{node.name}()")
    a = compile_expr(node.args[1], ctx)
    b = compile_expr(node.args[2], ctx)
    agg = cond.agg or a.agg or b.agg
    if a.type is T.NULL:
        a = Typed(f"NULL::{PG_TYPE.get(b.type, 'text')}", b.type)
    if b.type is T.NULL:
        b = Typed(f"NULL::{PG_TYPE.get(a.type, 'text')}", a.type)
    if a.type in INTEGRAL and b.type in INTEGRAL and a.type is not b.type:
        a, b = replace(a, type=T.LONG), replace(b, type=T.LONG)
    elif a.type in NUMERIC and b.type in NUMERIC and a.type is not b.type:
        a, b = Typed(f"({a.sql})::float8", T.REAL, agg=a.agg), Typed(f"({b.sql})::float8", T.REAL, agg=b.agg)
    if a.type is not b.type:
        raise QueryError(
            f"{node.name}() needs both results of one type, got {describe(a.type)} and {describe(b.type)}", node.pos
        )
    return Typed(f"(CASE WHEN {cond.sql} THEN {a.sql} ELSE {b.sql} END)", a.type, agg=agg)


_SCALARS: dict[str, Callable[[ast.Call, Ctx], Typed]] = {
    "now": _now,
    "ago": _ago,
    "bin": _bin,
    "floor": _bin,
    "isnull": _isnull,
    "isnotnull": _isnull,
    "isempty": _isempty,
    "isnotempty": _isempty,
    "tostring": _tostring,
    "toint": _tolong,
    "tolong": _tolong,
    "todouble": _todouble,
    "toreal": _todouble,
    "tolower": _string_fn,
    "toupper": _string_fn,
    "strlen": _string_fn,
    "iff": _iff,
    "iif": _iff,
}

# ---- aggregations -------------------------------------------------------------------------------------


def _aggregation(node: ast.Call, ctx: Ctx) -> Typed:
    if not ctx.allow_agg:
        where = "inside another aggregation" if ctx.in_agg else "outside 'summarize'"
        raise QueryError(f"aggregation {node.name}() cannot be used {where}", node.pos)
    inner = ctx.inner(allow_agg=False, in_agg=True)
    name = node.name
    if name == "count":
        _arity(node, 0)
        return Typed("count(*)", T.LONG, agg=True)
    if name == "percentile":
        _arity(node, 2)
    else:
        _arity(node, 1)
    x = compile_expr(node.args[0], inner)
    pos = node.args[0].pos
    if name == "countif":
        cond = boolean(x, pos, "countif()")
        return Typed(f"count(*) FILTER (WHERE {cond.sql})", T.LONG, agg=True)
    if name == "dcount":
        value = f"NULLIF({x.sql}, 'null'::jsonb)" if x.type is T.DYNAMIC else x.sql
        return Typed(f"count(DISTINCT {value})", T.LONG, agg=True)
    if name == "make_set":
        if x.type is T.DYNAMIC:
            return Typed(
                f"COALESCE(jsonb_agg(DISTINCT {x.sql}) FILTER (WHERE jsonb_typeof({x.sql}) <> 'null'), '[]'::jsonb)",
                T.DYNAMIC,
                agg=True,
            )
        if x.type is T.NULL:
            return Typed("'[]'::jsonb", T.DYNAMIC, agg=True)
        # A typed set keeps its element type; render.py turns it into a JSON array.
        return Typed(
            f"COALESCE(array_agg(DISTINCT {x.sql}) FILTER (WHERE {x.sql} IS NOT NULL), '{{}}')",
            x.type,
            agg=True,
            array=True,
        )
    if name == "percentile":
        p = compile_expr(node.args[1], inner)
        if not (p.is_const and p.type in NUMERIC and 0 <= p.const <= 100):
            raise QueryError("percentile() needs a number from 0 to 100 as its second argument", node.args[1].pos)
        n = number(x, pos, "percentile()")
        fraction = ctx.params.add(float(p.const) / 100.0, "float8")
        return Typed(f"percentile_cont({fraction}) WITHIN GROUP (ORDER BY {n.sql})", T.REAL, agg=True)
    if name in ("min", "max"):
        if x.type in (T.STRING, T.DATETIME, T.TIMESPAN, T.LONG, T.INT, T.REAL):
            return Typed(f"{name}({x.sql})", x.type, agg=True)
        n = number(x, pos, f"{name}()")
        return Typed(f"{name}({n.sql})", n.type, agg=True)
    if x.type is T.TIMESPAN:  # sum / avg of durations
        return Typed(f"{name}({x.sql})", T.TIMESPAN, agg=True)
    if name == "sum" and x.type is T.DYNAMIC:
        # JSON numbers are summed as PostgreSQL's numeric (how jsonb holds them): exact, and whole when every
        # value is whole (200 + 300 is 500, not 500.0). The sum is a JSON number, so the result reports it
        # as `long` or `real` by its values.
        value = f"(CASE WHEN jsonb_typeof({x.sql}) = 'number' THEN ({x.sql})::numeric END)"
        return Typed(f"to_jsonb(sum({value}))", T.DYNAMIC, agg=True)
    n = number(x, pos, f"{name}()")
    if name == "sum":
        if n.type in INTEGRAL:
            return Typed(f"sum({n.sql})::bigint", T.LONG, agg=True)
        return Typed(f"sum({n.sql})", T.REAL, agg=True)
    return Typed(f"avg({n.sql})::float8", T.REAL, agg=True)

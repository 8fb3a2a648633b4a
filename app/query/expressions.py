"""Scalar expressions to typed SQL. Field names and literals only ever become bind parameters."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import orjson

from app.query import ast
from app.query.coerce import boolean, describe, dyn_as, is_null, not_true, number, text
from app.query.errors import QueryError
from app.query.types import INTEGRAL, NUMERIC, PG_TYPE, Params, T, Typed

Resolver = Callable[[str, int], Typed]
CallCompiler = Callable[[ast.Call, "Ctx"], Typed]


@dataclass
class Ctx:
    """What compiling an expression needs: the bind parameters, `now` for ago()/now(), the names in scope,
    how function calls compile (app/query/functions.py's `compile_call`, given by the planner: the functions
    compile their arguments with `compile_expr`, so this module does not import them), and whether aggregations
    are allowed here (only directly inside `summarize`)."""

    params: Params
    now: datetime
    resolve: Resolver
    compile_call: CallCompiler
    allow_agg: bool = False
    in_agg: bool = False

    def inner(self, *, allow_agg: bool, in_agg: bool) -> Ctx:
        return Ctx(self.params, self.now, self.resolve, self.compile_call, allow_agg=allow_agg, in_agg=in_agg)


def compile_expr(node: ast.Expr, ctx: Ctx) -> Typed:
    if isinstance(node, ast.Literal):
        return literal(node, ctx.params)
    if isinstance(node, ast.Field):
        if ctx.allow_agg:  # directly in a `summarize` aggregation item, outside any aggregation
            raise QueryError(
                f"'{node.name}' must be inside an aggregation such as avg({node.name}), or listed after 'by'",
                node.pos,
            )
        return ctx.resolve(node.name, node.pos)
    if isinstance(node, ast.Call):
        return ctx.compile_call(node, ctx)
    if isinstance(node, ast.Unary):
        return _unary(node, ctx)
    if isinstance(node, ast.Binary):
        return _binary(node, ctx)
    if isinstance(node, ast.InList):
        return _in_list(node, ctx)
    if isinstance(node, ast.Between):
        return _between(node, ctx)
    raise AssertionError(node)


def literal(node: ast.Literal, params: Params) -> Typed:
    kind, value = node.kind, node.value
    if kind == "null":
        return Typed("NULL", T.NULL, const=None)
    t = {
        "string": T.STRING,
        "long": T.LONG,
        "real": T.REAL,
        "bool": T.BOOL,
        "datetime": T.DATETIME,
        "timespan": T.TIMESPAN,
    }[kind]
    if t is T.LONG and not -(2**63) <= value <= 2**63 - 1:  # type: ignore[operator]
        raise QueryError("whole number out of range (it must fit in 64 bits)", node.pos)
    return Typed(params.add(value, PG_TYPE[t]), t, const=value, not_null=True)


def _unary(node: ast.Unary, ctx: Ctx) -> Typed:
    x = compile_expr(node.operand, ctx)
    if node.op == "not":
        # Two-valued, as in the language: a comparison with a missing value is false, so its negation is true.
        b = boolean(x, node.operand.pos, "'not'")
        return Typed(not_true(b.sql), T.BOOL, agg=x.agg)
    if x.type is T.TIMESPAN:
        return Typed(f"(-{x.sql})", T.TIMESPAN, agg=x.agg)
    n = number(x, node.operand.pos, "'-'")
    return Typed(f"(-{n.sql})", n.type, agg=x.agg)


_ARITHMETIC = {"+", "-", "*", "/", "%"}
_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_SQL_OP = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _binary(node: ast.Binary, ctx: Ctx) -> Typed:
    left = compile_expr(node.left, ctx)
    right = compile_expr(node.right, ctx)
    op = node.op
    agg = left.agg or right.agg
    if op in ("and", "or"):
        a = boolean(left, node.left.pos, f"'{op}'")
        b = boolean(right, node.right.pos, f"'{op}'")
        return Typed(f"({a.sql} {op.upper()} {b.sql})", T.BOOL, agg=agg)
    if op in _ARITHMETIC:
        return _arithmetic(op, left, right, node, agg)
    if op in _COMPARE:
        return compare(op, left, right, node.pos, ctx.params)
    if op in ("=~", "!~"):
        a = text(left, node.left.pos, f"'{op}'")
        b = text(right, node.right.pos, f"'{op}'")
        sql = f"(lower({a.sql}) = lower({b.sql}))"
        return Typed(sql if op == "=~" else not_true(sql), T.BOOL, agg=agg)
    return _string_op(op, left, right, node, ctx.params)


def _arithmetic(op: str, left: Typed, right: Typed, node: ast.Binary, agg: bool) -> Typed:
    lt, rt = left.type, right.type
    where = f"'{op}'"
    # Time arithmetic first: datetime ± timespan, datetime - datetime, timespan scaled by a number.
    if lt is T.DATETIME and rt is T.TIMESPAN and op in "+-":
        return Typed(f"({left.sql} {op} {right.sql})", T.DATETIME, agg=agg)
    if lt is T.TIMESPAN and rt is T.DATETIME and op == "+":
        return Typed(f"({right.sql} + {left.sql})", T.DATETIME, agg=agg)
    if lt is T.DATETIME and rt is T.DATETIME and op == "-":
        return Typed(f"({left.sql} - {right.sql})", T.TIMESPAN, agg=agg)
    if lt is T.TIMESPAN and rt is T.TIMESPAN:
        if op in "+-":
            return Typed(f"({left.sql} {op} {right.sql})", T.TIMESPAN, agg=agg)
        if op == "/":
            return Typed(
                f"(EXTRACT(EPOCH FROM {left.sql}) / NULLIF(EXTRACT(EPOCH FROM {right.sql}), 0))::float8",
                T.REAL,
                agg=agg,
            )
    if lt is T.TIMESPAN and op in "*/" and rt not in (T.DATETIME, T.TIMESPAN, T.STRING, T.BOOL):
        n = number(right, node.right.pos, where)
        divisor = f"NULLIF({n.sql}, 0)" if op == "/" else n.sql
        return Typed(f"({left.sql} {op} ({divisor})::float8)", T.TIMESPAN, agg=agg)
    if rt is T.TIMESPAN and op == "*" and lt not in (T.DATETIME, T.TIMESPAN, T.STRING, T.BOOL):
        n = number(left, node.left.pos, where)
        return Typed(f"({right.sql} * ({n.sql})::float8)", T.TIMESPAN, agg=agg)
    if lt in (T.DATETIME, T.TIMESPAN) or rt in (T.DATETIME, T.TIMESPAN):
        raise QueryError(f"cannot apply '{op}' to {describe(lt)} and {describe(rt)}", node.pos)
    a = number(left, node.left.pos, where)
    b = number(right, node.right.pos, where)
    integral = a.type in INTEGRAL and b.type in INTEGRAL
    if op == "%":
        if not integral:
            raise QueryError("'%' needs two whole numbers", node.pos)
        return Typed(f"mod({a.sql}, NULLIF({b.sql}, 0))", T.LONG, agg=agg)
    if op == "/":
        # Division by zero is NULL, not an error that would fail the whole query.
        return Typed(f"({a.sql} / NULLIF({b.sql}, 0))", T.LONG if integral else T.REAL, agg=agg)
    return Typed(f"({a.sql} {op} {b.sql})", T.LONG if integral else T.REAL, agg=agg)


def _json_param(value: object, params: Params) -> str:
    return params.add(orjson.dumps(value).decode(), "jsonb")


def compare(op: str, left: Typed, right: Typed, pos: int, params: Params) -> Typed:
    """Typed comparison: numbers compare as numbers, strings as strings; a field value compares only with
    a value of its own JSON type (the string "500" is not equal to the number 500)."""
    agg = left.agg or right.agg
    if left.type is T.NULL or right.type is T.NULL:
        other = right if left.type is T.NULL else left
        if op == "==":
            return Typed(is_null(other), T.BOOL, agg=agg)
        if op == "!=":
            return Typed(f"(NOT {is_null(other)})", T.BOOL, agg=agg)
        raise QueryError(f"cannot compare with null using '{op}'; use isnull() or isnotnull()", pos)
    if right.type is T.DYNAMIC and left.type is not T.DYNAMIC:
        left, right, op = right, left, _FLIPPED[op]
    sql_op = _SQL_OP[op]
    if left.type is T.DYNAMIC:
        if right.type is T.DYNAMIC:
            if op in ("==", "!="):
                return Typed(_eq(left.sql, right.sql, op), T.BOOL, agg=agg)
            return Typed(
                f"(CASE WHEN jsonb_typeof({left.sql}) = jsonb_typeof({right.sql}) "
                f"THEN {left.sql} {sql_op} {right.sql} END)",
                T.BOOL,
                agg=agg,
            )
        if right.is_const and right.type in (T.STRING, T.LONG, T.REAL, T.BOOL):
            return Typed(_dyn_vs_literal(op, left, right.const, params), T.BOOL, agg=agg)
        if right.type in NUMERIC:
            left = Typed(dyn_as(left, "number"), T.REAL, agg=left.agg)
        elif right.type is T.STRING:
            left = Typed(dyn_as(left, "string"), T.STRING, agg=left.agg)
        elif right.type is T.BOOL:
            left = Typed(dyn_as(left, "boolean"), T.BOOL, agg=left.agg)
        else:
            raise QueryError(
                f"cannot compare a field value with {describe(right.type)}; convert it first (e.g. toint())", pos
            )
    lt, rt = left.type, right.type
    if not (lt is rt or (lt in NUMERIC and rt in NUMERIC)):
        raise QueryError(f"cannot compare {describe(lt)} with {describe(rt)}", pos)
    if lt is T.BOOL and op not in ("==", "!="):
        raise QueryError(f"cannot order bools with '{op}'", pos)
    if op in ("==", "!="):
        return Typed(_eq(left.sql, right.sql, op), T.BOOL, agg=agg)
    return Typed(f"({left.sql} {sql_op} {right.sql})", T.BOOL, agg=agg)


def jsonpath_literal(value: object) -> str:
    """A literal in jsonpath syntax. JSON's string escapes are all valid in jsonpath strings, so a string
    (or a field name) written by orjson cannot end the literal early."""
    return orjson.dumps(value).decode()


# What `->>` can give for a JSON value that is not a string: PostgreSQL writes numbers as plain decimals.
_NON_STRING_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?|true|false|[\[{].*", re.DOTALL)


def _dyn_vs_literal(op: str, left: Typed, value: object, params: Params) -> str:
    """A field value against a literal, in one typed pass over the event's JSONB:
    `data @> '{"service": "api"}'` for equality (JSON numbers compare numerically, a string never equals a
    number), and a strict jsonpath `data @@ 'strict $."status" >= 500'` for order, which is unknown (not
    true) for a missing field or a value of another type. Both are bind parameters, never SQL text."""
    direct = left.field is not None and left.data is not None
    if op in ("==", "!="):
        if direct and type(value) is str and not _NON_STRING_TEXT.fullmatch(value):
            # `->>` gives every JSON value as text, but no number, boolean, object or array reads as this
            # literal, so text equality is typed here too, and cheaper than containment (bench/query.py's
            # string filter: 4.3 vs 4.8 ms in PostgreSQL).
            key, text_value = params.add(left.field, "text"), params.add(value, "text")
            sql = f"({left.data} ->> {key} = {text_value})"
        elif direct:
            sql = f"({left.data} @> {params.add(orjson.dumps({left.field: value}).decode(), 'jsonb')})"
        else:
            sql = f"({left.sql} = {_json_param(value, params)})"
        return sql if op == "==" else not_true(sql)
    path = f"strict $.{jsonpath_literal(left.field)}" if direct else "strict $"
    target = left.data if direct else left.sql
    jsonpath = params.add(f"{path} {op} {jsonpath_literal(value)}", "jsonpath")
    return f"({target} @@ {jsonpath})"


def _eq(a: str, b: str, op: str) -> str:
    # `!=` is true when a value is missing, like the other negations (`!in`, `!contains`).
    return f"({a} = {b})" if op == "==" else f"({a} IS DISTINCT FROM {b})"


def _in_list(node: ast.InList, ctx: Ctx) -> Typed:
    x = compile_expr(node.operand, ctx)
    items = [compile_expr(item, ctx) for item in node.items]
    agg = x.agg or any(i.agg for i in items)
    constants = all(i.is_const and i.type in (T.STRING, T.LONG, T.REAL, T.BOOL) for i in items)
    if constants and x.type is T.DYNAMIC:
        array = ctx.params.add([orjson.dumps(i.const).decode() for i in items], "jsonb[]")
        sql = f"({x.sql} = ANY({array}))"
    elif constants and x.type is T.STRING and all(i.type is T.STRING for i in items):
        sql = f"({x.sql} = ANY({ctx.params.add([i.const for i in items], 'text[]')}))"
    else:
        sql = "(" + " OR ".join(compare("==", x, i, node.pos, ctx.params).sql for i in items) + ")"
    return Typed(not_true(sql) if node.negated else sql, T.BOOL, agg=agg)


def _between(node: ast.Between, ctx: Ctx) -> Typed:
    x = compile_expr(node.operand, ctx)
    low = compile_expr(node.low, ctx)
    high = compile_expr(node.high, ctx)
    lo = compare(">=", x, low, node.pos, ctx.params)
    hi = compare("<=", x, high, node.pos, ctx.params)
    sql = f"({lo.sql} AND {hi.sql})"
    return Typed(not_true(sql) if node.negated else sql, T.BOOL, agg=x.agg or low.agg or high.agg)


MAX_TERM = 1000  # characters of a `has` term: 1,000 compile in 5 ms, 3,000 in 120 ms, 60,000 in over 30 s


def regex_escape(value: str) -> str:
    """Make `value` match itself in a PostgreSQL regular expression: escape every non-alphanumeric."""
    return "".join(ch if ch.isalnum() else "\\" + ch for ch in value)


def _string_op(op: str, left: Typed, right: Typed, node: ast.Binary, params: Params) -> Typed:
    negated = op.startswith("!")
    base = op.lstrip("!")
    a = text(left, node.left.pos, f"'{op}'")
    b = text(right, node.right.pos, f"'{op}'")
    agg = left.agg or right.agg
    if base == "matches regex":
        sql = f"({a.sql} ~ {b.sql})"
    elif base.startswith("has"):
        if not (right.is_const and right.type is T.STRING):
            raise QueryError(f"'{op}' needs a string literal on its right", node.right.pos)
        if len(right.const) > MAX_TERM:  # its regular expression costs PostgreSQL ever more to compile
            raise QueryError(f"'{op}' looks for a term of at most {MAX_TERM:,} characters", node.right.pos)
        # A whole term: not preceded or followed by a letter, digit or underscore.
        pattern = params.add(
            "(^|[^[:alnum:]_])" + regex_escape(str(right.const)) + "($|[^[:alnum:]_])",
            "text",
        )
        sql = f"({a.sql} {'~' if base == 'has_cs' else '~*'} {pattern})"
    else:
        # strpos/starts_with rather than LIKE: no wildcard escaping, and strpos(lower()) is the faster scan.
        case_sensitive = base.endswith("_cs")
        kind = base.removesuffix("_cs")
        needle = b.sql if case_sensitive else f"lower({b.sql})"
        hay = a.sql if case_sensitive else f"lower({a.sql})"
        if kind == "contains":
            sql = f"(strpos({hay}, {needle}) > 0)"
        elif kind == "startswith":
            sql = f"starts_with({hay}, {needle})"
        else:
            sql = f"(right({hay}, length({b.sql})) = {needle})"
    return Typed(not_true(sql) if negated else sql, T.BOOL, agg=agg)


_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def name_part(node: ast.Expr) -> str | None:
    """The field name an expression is about, for naming unnamed columns (`avg(duration_ms)` -> duration_ms)."""
    if isinstance(node, ast.Field):
        return node.name
    return None


def safe_name_part(name: str) -> str:
    return _NAME_UNSAFE.sub("_", name)

"""Reading typed values out of JSON event fields, and the typing rules shared by operators and functions.

Event fields are JSONB: `CASE WHEN jsonb_typeof(x) = 'number' ...` guards every conversion, so a field that
holds a number in one event and a string in another never raises a cast error: where the type does not
fit, the value is NULL (and a comparison with NULL is not true).
"""

from __future__ import annotations

from app.query.errors import QueryError
from app.query.types import NUMERIC, T, Typed

DESCRIBE = {
    T.STRING: "a string",
    T.LONG: "a whole number",
    T.INT: "a whole number",
    T.REAL: "a number",
    T.BOOL: "a bool",
    T.DATETIME: "a datetime",
    T.TIMESPAN: "a timespan",
    T.DYNAMIC: "a field value",
    T.NULL: "null",
}


def describe(t: T) -> str:
    return DESCRIBE[t]


def dyn_text(x: Typed) -> str:
    """Text of a JSON scalar (numbers and bools as their JSON text), NULL for a JSON null or a missing field."""
    if x.key is not None and x.data is not None:
        return f"({x.data} ->> {x.key})"
    return f"(({x.sql}) #>> '{{}}')"


def dyn_as(x: Typed, json_type: str) -> str:
    """`x` when its JSON type is `json_type` (one of our fixed type names), else NULL."""
    if json_type == "number":
        # Through the JSON text: jsonb -> float8 goes through numeric and text, and is slower.
        return f"(CASE WHEN jsonb_typeof({x.sql}) = 'number' THEN {dyn_text(x)}::float8 END)"
    if json_type == "string":
        return f"(CASE WHEN jsonb_typeof({x.sql}) = 'string' THEN {dyn_text(x)} END)"
    if json_type == "boolean":
        return f"(CASE WHEN jsonb_typeof({x.sql}) = 'boolean' THEN ({x.sql})::boolean END)"
    raise AssertionError(json_type)


def number(x: Typed, pos: int, what: str) -> Typed:
    """`x` as a number: numbers as they are, JSON numbers as float8, anything else a type error."""
    if x.type in NUMERIC:
        return x
    if x.type is T.DYNAMIC:
        return Typed(dyn_as(x, "number"), T.REAL, agg=x.agg)
    if x.type is T.NULL:
        return Typed("NULL::float8", T.REAL)
    raise QueryError(f"{what} needs a number, got {describe(x.type)}", pos)


def text(x: Typed, pos: int, what: str) -> Typed:
    """`x` as text: strings as they are, field values by their JSON text, numbers and bools converted."""
    if x.type is T.STRING:
        return x
    if x.type is T.DYNAMIC:
        return Typed(dyn_text(x), T.STRING, agg=x.agg)
    if x.type in NUMERIC or x.type is T.BOOL:
        return Typed(f"({x.sql})::text", T.STRING, agg=x.agg)
    if x.type is T.NULL:
        return Typed("NULL::text", T.STRING)
    raise QueryError(f"{what} needs a string, got {describe(x.type)}", pos)


def boolean(x: Typed, pos: int, what: str) -> Typed:
    if x.type is T.BOOL:
        return x
    if x.type is T.DYNAMIC:
        return Typed(dyn_as(x, "boolean"), T.BOOL, agg=x.agg)
    if x.type is T.NULL:
        return Typed("NULL::boolean", T.BOOL)
    raise QueryError(f"{what} needs a true/false condition, got {describe(x.type)}", pos)


def is_null(x: Typed) -> str:
    """True when the value is missing or a JSON null."""
    if x.type is T.DYNAMIC:
        return f"COALESCE(jsonb_typeof({x.sql}) = 'null', true)"
    if x.type is T.NULL:
        return "true"
    return f"(({x.sql}) IS NULL)"


def not_true(sql: str) -> str:
    """Negation that counts an unknown (NULL) result as false first: `!in`, `!contains` keep rows lacking the field."""
    return f"(NOT COALESCE({sql}, false))"

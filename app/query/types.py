"""Value types of the language, typed SQL fragments, and the bind-parameter list of one statement."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class T(Enum):
    STRING = "string"
    LONG = "long"
    INT = "int"
    REAL = "real"
    BOOL = "bool"
    DATETIME = "datetime"
    TIMESPAN = "timespan"
    DYNAMIC = "dynamic"  # a JSON value from an event field: its type is known only per row
    NULL = "null"  # the `null` literal, before it meets another type


NUMERIC = frozenset({T.LONG, T.INT, T.REAL})
INTEGRAL = frozenset({T.LONG, T.INT})

PG_TYPE = {
    T.STRING: "text",
    T.LONG: "bigint",
    T.INT: "bigint",
    T.REAL: "float8",
    T.BOOL: "boolean",
    T.DATETIME: "timestamptz",
    T.TIMESPAN: "interval",
    T.DYNAMIC: "jsonb",
}

_NO_CONSTANT = object()


@dataclass(frozen=True)
class Typed:
    """An SQL expression and its type.

    `field`/`key`/`data`: set when the expression is `data -> key` (the event field `field`, `key` its bind
    placeholder), so that cheaper typed forms over the whole `data` can be used (`data @> ...`, `data @@ ...`).
    `const`: the Python value when the expression is a literal.
    `agg`: the expression contains an aggregation. `not_null`: never NULL (lets ORDER BY match the index).
    `array`: an SQL array of `type` values (make_set of typed values).
    """

    sql: str
    type: T
    agg: bool = False
    field: str | None = None
    key: str | None = None
    data: str | None = None
    not_null: bool = False
    const: Any = _NO_CONSTANT
    array: bool = False

    @property
    def is_const(self) -> bool:
        return self.const is not _NO_CONSTANT


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class Params:
    """Bind parameters of one statement: `add` returns a placeholder such as `$3::text`.

    Equal values of the same type share one placeholder, so an expression compiled once is textually
    identical wherever it appears (PostgreSQL matches GROUP BY expressions by their text and parameters).
    """

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._seen: dict[tuple[str, type, Any], str] = {}

    def add(self, value: Any, pg_type: str) -> str:
        ident = (pg_type, type(value), _freeze(value))
        found = self._seen.get(ident)
        if found is not None:
            return found
        self.values.append(value)
        placeholder = f"${len(self.values)}::{pg_type}"
        self._seen[ident] = placeholder
        return placeholder

    def copy(self) -> Params:
        other = Params()
        other.values = list(self.values)
        other._seen = dict(self._seen)
        return other

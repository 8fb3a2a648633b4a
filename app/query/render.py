"""Result rows as JSON values: datetimes as RFC 3339 UTC strings, field values parsed, column types named.

A column of event-field values (type `dynamic` in the SQL) is reported with the type its values actually
have (`string`, `long`, `real`, `bool`), or `dynamic` when they are mixed or JSON objects/arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from app.query.compiler import Layout, OutColumn
from app.query.types import T

Converter = Callable[[Any], Any]


def render_time(value: datetime) -> str:
    """RFC 3339 UTC with `Z`: milliseconds, or microseconds when the value has them."""
    if value.tzinfo is not UTC:  # asyncpg returns UTC already; anything else is converted
        value = value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if value.microsecond % 1000:
        return value.isoformat()[:-6] + "Z"
    return value.isoformat(timespec="milliseconds")[:-6] + "Z"


def render_timespan(value: timedelta) -> str:
    """The language's timespan notation: `[-][d.]hh:mm:ss[.ffffff]`, e.g. `00:05:00`, `1.02:00:00`."""
    sign = "-" if value < timedelta(0) else ""
    value = abs(value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{hours:02d}:{minutes:02d}:{seconds:02d}"
    if value.days:
        text = f"{value.days}.{text}"
    if value.microseconds:
        text += f".{value.microseconds:06d}"
    return sign + text


def _real(value: Any) -> Any:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None  # JSON has no NaN or infinity


def _loads(value: Any) -> Any:
    return None if value is None else orjson.loads(value)


def _time(value: Any) -> Any:
    return None if value is None else render_time(value)


def _span(value: Any) -> Any:
    return None if value is None else render_timespan(value)


def _identity(value: Any) -> Any:
    return value


_SCALAR: dict[T, Converter] = {
    T.DYNAMIC: _loads,
    T.DATETIME: _time,
    T.TIMESPAN: _span,
    T.REAL: _real,
}


def converter(col: OutColumn) -> Converter:
    one = _SCALAR.get(col.type, _identity)
    if col.array:
        if col.type is T.DYNAMIC:
            return one
        return lambda values: [one(v) for v in values] if values is not None else []
    return one


_TYPE_NAMES = {bool: "bool", int: "long", float: "real", str: "string"}


def infer_type(values: Iterable[Any]) -> str:
    """The type name of a column of JSON values: one scalar type, `real` for a mix of whole and fractional
    numbers, `dynamic` for anything else (mixed types, objects, arrays, or no values at all)."""
    kinds = {type(v) for v in values}  # one C-level pass; per-value isinstance() is far slower
    kinds.discard(type(None))
    if kinds == {int, float}:
        return "real"
    if len(kinds) == 1:
        return _TYPE_NAMES.get(kinds.pop(), "dynamic")
    return "dynamic"


def type_name(col: OutColumn, values: Iterable[Any]) -> str:
    if col.array:
        return "dynamic"
    if col.type is T.DYNAMIC:
        return infer_type(values)
    return col.type.value


def table_result(records: Sequence[Sequence[Any]], layout: Layout) -> tuple[list[dict[str, str]], list[list[Any]]]:
    """Columns (name and type) and rows of a result whose columns the query named."""
    if layout.raw:
        return _raw_result(records, layout)
    convert = [converter(c) for c in layout.columns]
    rows = [[f(v) for f, v in zip(convert, record, strict=True)] for record in records]
    columns = [{"name": c.name, "type": type_name(c, (row[i] for row in rows))} for i, c in enumerate(layout.columns)]
    return columns, rows


def _raw_result(records: Sequence[Sequence[Any]], layout: Layout) -> tuple[list[dict[str, str]], list[list[Any]]]:
    """Whole events: `_time`, then every field present in any returned event (sorted), then extended columns."""
    has_time = layout.time is not None
    data_at = 1 if has_time else 0
    loads = orjson.loads
    events = [loads(record[data_at]) for record in records]
    keys: set[str] = set()
    for fields in events:
        keys.update(fields)
    ext_names = {c.name for c in layout.extended}
    # An extended column replaces the event field of the same name.
    field_names = sorted(keys - ext_names - ({"_time"} if has_time else set()))
    columns: list[dict[str, str]] = []
    if layout.time is not None:
        columns.append({"name": layout.time.name, "type": type_name(layout.time, ())})
        convert = converter(layout.time)
        rows = [
            [convert(record[0]), *[fields.get(k) for k in field_names]]
            for record, fields in zip(records, events, strict=True)
        ]
    else:
        rows = [[fields.get(k) for k in field_names] for fields in events]
    offset = len(columns)
    for i, name in enumerate(field_names, offset):
        columns.append({"name": name, "type": infer_type([row[i] for row in rows])})
    if layout.extended:
        ext_convert = [converter(c) for c in layout.extended]
        start = data_at + 1
        for row, record in zip(rows, records, strict=True):
            row.extend(f(v) for f, v in zip(ext_convert, record[start:], strict=True))
        offset = len(columns)
        for i, c in enumerate(layout.extended, offset):
            columns.append({"name": c.name, "type": type_name(c, [row[i] for row in rows])})
    return columns, rows


def ndjson_encoder(layout: Layout) -> Callable[[Sequence[Any]], bytes]:
    """One NDJSON line per row, as an object of column name to value."""
    if layout.raw:
        time_convert = converter(layout.time) if layout.time is not None else None
        if not layout.extended:
            # The event's fields are already JSON text from PostgreSQL: splice `_time` in without parsing.
            if time_convert is None:
                return lambda record: record[0].encode() + b"\n"

            def event_line(record: Sequence[Any]) -> bytes:
                head = b'{"_time":' + orjson.dumps(time_convert(record[0]))
                data: str = record[1]
                if data == "{}":
                    return head + b"}\n"
                return head + b"," + data[1:].encode() + b"\n"

            return event_line
        ext = [(c.name, converter(c)) for c in layout.extended]
        data_at = 1 if time_convert is not None else 0

        def extended_line(record: Sequence[Any]) -> bytes:
            obj: dict[str, Any] = {"_time": time_convert(record[0])} if time_convert is not None else {}
            obj.update(orjson.loads(record[data_at]))
            for (name, f), v in zip(ext, record[data_at + 1 :], strict=True):
                obj[name] = f(v)
            return orjson.dumps(obj) + b"\n"

        return extended_line
    cols = [(c.name, converter(c)) for c in layout.columns]

    def table_line(record: Sequence[Any]) -> bytes:
        return orjson.dumps({name: f(v) for (name, f), v in zip(cols, record, strict=True)}) + b"\n"

    return table_line

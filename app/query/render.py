"""Result rows as JSON values: datetimes as RFC 3339 UTC strings, field values parsed, column types named.

A column of event-field values (type `dynamic` in the SQL) is reported with the type its values actually
have (`string`, `long`, `real`, `bool`), or `dynamic` when they are mixed or JSON objects/arrays.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import msgspec

from app.query.compiler import Layout, OutColumn
from app.query.types import T

Converter = Callable[[Any], Any]

# JSON is read and written with msgspec: integers beyond 64 bits stay exact, as ingest stored them (orjson
# reads them as floats and cannot write them).
_JSON = msgspec.json.Encoder()


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
    return None if value is None else msgspec.json.decode(value)


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


def converter(col: OutColumn, json_text: bool = True) -> Converter:
    """What a value of `col` becomes in a result. `json_text`: JSON values come as text, else parsed."""
    one = _identity if col.type is T.DYNAMIC and not json_text else _SCALAR.get(col.type, _identity)
    if col.array:
        if col.type is T.DYNAMIC:
            return one
        return lambda values: [one(v) for v in values] if values is not None else []
    return one


# msgspec writes aware datetimes at C speed as `...:SS.ffffffZ` (UTC), or `...:SSZ` when the microseconds are
# zero; these bring that to `render_time`'s form (milliseconds unless the value has microseconds). In the text
# of a list of such datetimes `000Z"` can only end a fraction, and a `.` only start one.
_TIME_TEXTS = msgspec.json.Decoder(list[str | None])
_WHOLE_S = re.compile(rb':(\d\d)Z"')


def render_times(values: list[Any]) -> list[Any]:
    """`render_time` over a column (None stays None), about 5x faster than one call per value."""
    text = _JSON.encode(values)
    present = len(values) - values.count(None)
    if text.count(b'Z"') != present:  # naive, or an offset other than UTC: convert one by one
        return [None if v is None else render_time(v) for v in values]
    text = text.replace(b'000Z"', b'Z"')
    if text.count(b".") != present:
        text = _WHOLE_S.sub(rb':\1.000Z"', text)
    return _TIME_TEXTS.decode(text)


_TYPE_NAMES = {bool: "bool", int: "long", float: "real", str: "string"}


def infer_type(values: Iterable[Any]) -> str:
    """The type name of a column of JSON values: one scalar type, `real` for a mix of whole and fractional
    numbers, `dynamic` for anything else (mixed types, objects, arrays, or no values at all)."""
    kinds = set(map(type, values))  # one C-level pass; per-value isinstance() is far slower
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


Column = tuple[dict[str, str], list[Any]]  # ({name, type}, values top to bottom)


def _sql_column(records: Sequence[Sequence[Any]], at: int, col: OutColumn, json_text: bool) -> Column:
    values = list(map(itemgetter(at), records))
    if col.type is T.DATETIME and not col.array:
        values = render_times(values)
    else:
        convert = converter(col, json_text)
        if convert is not _identity:
            values = list(map(convert, values))
    return {"name": col.name, "type": type_name(col, values)}, values


Rows = list[tuple[Any, ...]]


def _rows(records: Sequence[Any], columns: list[Column]) -> tuple[list[dict[str, str]], Rows]:
    if not columns:
        return [], [() for _ in records]
    return [c[0] for c in columns], list(zip(*(c[1] for c in columns), strict=True))


def table_result(records: Sequence[Sequence[Any]], layout: Layout) -> tuple[list[dict[str, str]], Rows]:
    """Columns (name and type) and rows of a result. Built column by column, so that each conversion and
    type check is one C-level pass (map, set) over a list rather than a Python call per value."""
    if layout.raw:
        return _rows(records, _raw_columns(records, layout, _events(records, layout), sorted))
    return _rows(records, [_sql_column(records, i, c, layout.json_text) for i, c in enumerate(layout.columns)])


@dataclass(frozen=True)
class Bounds:
    """What one result may carry: columns (whole events bring a column per field of any of them), and cells
    (rows x columns: rows past it are cut)."""

    max_columns: int
    max_cells: int

    def rows_for(self, columns: int) -> int:
        return max(1, self.max_cells // max(1, columns))


@dataclass
class Table:
    columns: list[dict[str, str]]
    rows: Rows
    fields_left_out: int = 0  # event fields of the rows that did not fit in `max_columns`
    rows_cut: bool = False  # rows were left out to keep within `max_cells`


def bounded_table(records: Sequence[Sequence[Any]], layout: Layout, bounds: Bounds) -> Table:
    """`table_result` within `bounds`: rows in order while their columns x rows stay within `max_cells`; when the
    events kept hold more fields than `max_columns`, the columns are the fields the most of them have (then by
    name). A result of thousands of sparse fields was thousands of columns of nulls per row: 50,000 fields by
    2,000 rows took 39 s to build and send."""
    if not layout.raw:
        keep = bounds.rows_for(len(layout.columns))
        cut = len(records) > keep
        columns, rows = table_result(records[:keep] if cut else records, layout)
        return Table(columns, rows, rows_cut=cut)
    events = _events(records, layout)
    others = len(layout.extended) + (layout.time is not None)
    room = max(0, bounds.max_columns - others)
    keep = _rows_that_fit(events, _taken(layout), room, others, bounds.max_cells)
    cut = keep < len(records)
    if cut:
        records, events = records[:keep], events[:keep]
    names, left_out = _most_common(events, layout, room)
    columns, rows = _rows(records, _raw_columns(records, layout, events, lambda _: names))
    return Table(columns, rows, fields_left_out=left_out, rows_cut=cut)


def _rows_that_fit(events: list[dict[str, Any]], taken: set[str], room: int, others: int, max_cells: int) -> int:
    """How many of the first events fit in `max_cells` values, each row as wide as the fields of the rows so far
    (at most `room`) plus `others` columns; at least one."""
    seen: set[str] = set()
    for i, event in enumerate(events):
        if len(seen) <= room + len(taken):  # past that the width is `room` whatever comes
            seen.update(event)
        width = min(room, len(seen) - len(taken & seen)) + others
        if i and width * (i + 1) > max_cells:
            return i
    return len(events)


def _most_common(events: list[dict[str, Any]], layout: Layout, room: int) -> tuple[list[str], int]:
    """The fields of the events that fit in `room` columns (by the number of events that have them, then by
    name), sorted by name; and how many were left out."""
    counts = Counter(chain.from_iterable(events))
    for name in _taken(layout):
        counts.pop(name, None)
    if len(counts) <= room:
        return sorted(counts), 0
    chosen = heapq.nsmallest(room, counts.items(), key=lambda item: (-item[1], item[0]))
    return sorted(name for name, _ in chosen), len(counts) - room


def _taken(layout: Layout) -> set[str]:
    # An extended column replaces the event field of the same name.
    return {c.name for c in layout.extended} | ({"_time"} if layout.time is not None else set())


def _events(records: Sequence[Sequence[Any]], layout: Layout) -> list[dict[str, Any]]:
    """The events of whole-event rows, parsed. They come parsed (from the query pool), or as JSON texts,
    parsed here as one array in one call."""
    events = list(map(itemgetter(1 if layout.time is not None else 0), records))
    if layout.json_text:
        events = msgspec.json.decode("[" + ",".join(events) + "]")
    return events


def _raw_columns(
    records: Sequence[Sequence[Any]],
    layout: Layout,
    events: list[dict[str, Any]],
    choose: Callable[[set[str]], Iterable[str]],
) -> list[Column]:
    """Whole events: `_time`, then the event fields `choose` picks (given every field present in any returned
    event, less those an extended column replaces), then extended columns."""
    columns: list[Column] = []
    if layout.time is not None:
        columns.append(_sql_column(records, 0, layout.time, layout.json_text))
    data_at = len(columns)
    for name in choose(set().union(*events) - _taken(layout)):
        values = list(map(dict.get, events, repeat(name)))
        columns.append(({"name": name, "type": infer_type(values)}, values))
    columns.extend(_sql_column(records, at, c, layout.json_text) for at, c in enumerate(layout.extended, data_at + 1))
    return columns


def ndjson_encoder(layout: Layout) -> Callable[[Sequence[Any]], bytes]:
    """One NDJSON line per row, as an object of column name to value."""
    json_text = layout.json_text
    if layout.raw:
        time_convert = converter(layout.time, json_text) if layout.time is not None else None
        if not layout.extended and json_text:
            # The event's fields are already JSON text from PostgreSQL: splice `_time` in without parsing.
            if time_convert is None:
                return lambda record: record[0].encode() + b"\n"

            def spliced_line(record: Sequence[Any]) -> bytes:
                head = b'{"_time":' + _JSON.encode(time_convert(record[0]))
                data: str = record[1]
                if data == "{}":
                    return head + b"}\n"
                return head + b"," + data[1:].encode() + b"\n"

            return spliced_line
        fields: Converter = msgspec.json.decode if json_text else _identity
        ext = [(c.name, converter(c, json_text)) for c in layout.extended]
        data_at = 1 if time_convert is not None else 0

        def event_line(record: Sequence[Any]) -> bytes:
            obj: dict[str, Any] = {"_time": time_convert(record[0])} if time_convert is not None else {}
            obj.update(fields(record[data_at]))
            for (name, f), v in zip(ext, record[data_at + 1 :], strict=True):
                obj[name] = f(v)
            return _JSON.encode(obj) + b"\n"

        return event_line
    cols = [(c.name, converter(c, json_text)) for c in layout.columns]

    def table_line(record: Sequence[Any]) -> bytes:
        return _JSON.encode({name: f(v) for (name, f), v in zip(cols, record, strict=True)}) + b"\n"

    return table_line

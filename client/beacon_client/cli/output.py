"""Query results as a table, JSON, NDJSON or CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

import msgspec

from beacon_client import QueryResult

_NUMERIC = {"int", "integer", "long", "real", "float", "double", "decimal", "number"}
MAX_CELL = 80


SIGNIFICANT = 13  # digits of a real shown in a table: sums and averages of floats carry noise in the last ones


def _real(value: float) -> str:
    """A real as people read it: `49.413842` for 49.413842000000216, `5020686274` for 5020686274.0."""
    if not (1e-4 <= abs(value) < 1e15):
        if value == 0:
            return "0"
        return str(value) if value != value else f"{value:.{SIGNIFICANT}g}"  # nan
    whole_digits = len(str(int(abs(value)))) if abs(value) >= 1 else 0
    text = f"{value:.{max(SIGNIFICANT - whole_digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return msgspec.json.encode(value).decode()


def _cell(value: Any) -> str:
    text = _real(value) if isinstance(value, float) else _text(value).replace("\n", "\\n")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(result: QueryResult) -> str:
    names = [c.name for c in result.columns]
    right = [c.type.lower() in _NUMERIC for c in result.columns]
    cells = [[_cell(v) for v in row] for row in result.rows]
    widths = [max([len(n), *(len(r[i]) for r in cells if i < len(r))]) for i, n in enumerate(names)]

    def line(values: list[str]) -> str:
        parts = [(v.rjust(w) if r else v.ljust(w)) for v, w, r in zip(values, widths, right, strict=False)]
        return "  ".join(parts).rstrip()

    out = [line(names), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    status = result.status
    note = f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"
    if status.truncated:
        note += ", truncated: raise take or narrow the query"
    if status.elapsed_ms is not None:
        note += f", {status.elapsed_ms:g} ms"
    out.append(note + ")")
    return "\n".join(out) + "\n"


def render_rows(result: QueryResult, fmt: str) -> str:
    if fmt == "table":
        return table(result)
    if fmt == "json":
        return msgspec.json.format(msgspec.json.encode(result.records()), indent=2).decode() + "\n"
    if fmt == "ndjson":
        return "".join(msgspec.json.encode(r).decode() + "\n" for r in result.records())
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.name for c in result.columns])
    writer.writerows([_text(v) for v in row] for row in result.rows)
    return buffer.getvalue()

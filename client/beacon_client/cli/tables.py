"""Plain-text tables and `name: value` blocks for the resource commands (monitors, notifiers, datasets), and
their `--format json` form."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

MAX_CELL = 60


def text(value: Any) -> str:
    """A value as a person reads it: `-` for nothing, times to the second, numbers without float noise."""
    if value is None or value == [] or value == {}:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds").replace("+00:00", "Z")
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, str | int):
        return str(value)
    return msgspec.json.encode(value).decode()


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _cell(value: Any) -> str:
    shown = text(value).replace("\n", "\\n")
    return shown if len(shown) <= MAX_CELL else shown[: MAX_CELL - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, empty: str = "(none)") -> str:
    """Columns padded to their widest cell; numbers right-aligned."""
    if not rows:
        return empty + "\n"
    cells = [[_cell(v) for v in row] for row in rows]
    right = [all(_number(row[i]) for row in rows) for i in range(len(headers))]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        padded = (v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True))
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in cells)]) + "\n"


def block(pairs: Sequence[tuple[str, Any]]) -> str:
    """`name: value` lines, the values aligned."""
    width = max(len(name) for name, _ in pairs)
    return "".join(f"{name + ':':<{width + 1}} {text(value)}\n" for name, value in pairs)


def as_json(value: Any) -> str:
    """Structs (and lists of them) as indented JSON, for --format json."""
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n"

"""Errors in query text, located by offset and reported with line and column."""

from __future__ import annotations

from app.errors import BeaconError


class QueryError(Exception):
    """Text that does not parse or type-check; `pos` is the offset of the offending character."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def line_column(source: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset `pos` in `source`."""
    pos = max(0, min(pos, len(source)))
    line = source.count("\n", 0, pos) + 1
    column = pos - (source.rfind("\n", 0, pos) + 1) + 1
    return line, column


def to_beacon_error(source: str, exc: QueryError, *, param: str = "apl") -> BeaconError:
    line, column = line_column(source, exc.pos)
    return BeaconError("invalid_query", f"Line {line}, column {column}: {exc.message}.", param=param)

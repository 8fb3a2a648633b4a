"""Datetimes given as query-string parameters: RFC 3339 with an offset, like request-body datetimes."""

from __future__ import annotations

from datetime import datetime

from app.errors import BeaconError
from app.schemas import TIME_RANGE, in_time_range


def to_ms(value: datetime) -> datetime:
    """Drop sub-millisecond digits: what is stored is exactly what responses (and filters) show."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def parse_time_param(value: str | None, param: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
        raise BeaconError(
            "invalid_parameter",
            f"`{param}` must be an RFC 3339 datetime with an offset, e.g. 2026-11-21T08:15:30Z; got {value!r}.",
            param=param,
        )
    if not in_time_range(parsed):
        raise BeaconError("invalid_parameter", f"`{param}` must lie {TIME_RANGE}; got {value!r}.", param=param)
    return parsed

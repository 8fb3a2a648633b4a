"""Datetimes given as query-string parameters: RFC 3339 with an offset, like request-body datetimes, or relative to
now in the query language's notation (`now-3h`), as `POST /v1/query` takes them."""

from __future__ import annotations

from datetime import UTC, datetime

from app.errors import BeaconError
from app.schemas import TIME_RANGE, in_time_range
from beacon_client.notation.timespans import UnknownUnit, relative


def to_ms(value: datetime) -> datetime:
    """Drop sub-millisecond digits: what is stored is exactly what responses (and filters) show."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def parse_time_param(value: str | None, param: str, now: datetime | None = None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = relative(value, now or datetime.now(UTC))
    except UnknownUnit as exc:
        raise BeaconError(
            "invalid_parameter", f"`{param}`: {exc} (use d, h, m, s or ms, as in now-3h).", param=param
        ) from None
    except OverflowError:
        parsed = datetime.max.replace(tzinfo=UTC)  # out of range: said below
    if parsed is None:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
            raise BeaconError(
                "invalid_parameter",
                f"`{param}` must be an RFC 3339 datetime with an offset, e.g. 2026-11-21T08:15:30Z, or a time "
                f"relative to now, e.g. now-3h; got {value!r}.",
                param=param,
            )
    if not in_time_range(parsed):
        raise BeaconError("invalid_parameter", f"`{param}` must lie {TIME_RANGE}; got {value!r}.", param=param)
    return parsed

"""The `start_time` / `end_time` of a query body: RFC 3339 with an offset, or relative to now (`now-1h`)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.errors import BeaconError
from beacon_client.notation.timespans import UnknownUnit, relative


def _out_of_range(param: str) -> BeaconError:
    return BeaconError(
        "invalid_field", f"Invalid value for `{param}`: the time must fall in the years 1 to 9999 (UTC).", param=param
    )


def parse_bound(value: str | None, now: datetime, param: str) -> datetime | None:
    if value is None:
        return None
    text = value.strip()
    try:
        moment = relative(text, now)
    except UnknownUnit as exc:
        raise BeaconError(
            "invalid_field",
            f"Invalid value for `{param}`: {exc} (use d, h, m, s or ms, as in now-1h).",
            param=param,
        ) from None
    except OverflowError:  # a huge amount overflows the timedelta, or the time it leads to
        raise _out_of_range(param) from None
    if moment is not None:
        return moment
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise BeaconError(
            "invalid_field",
            f"Invalid value for `{param}`: use RFC 3339 with an offset (2026-11-21T10:00:00Z) "
            "or a time relative to now (now-1h).",
            param=param,
        )
    try:  # in UTC, as it is sent to PostgreSQL: 0001-01-01T00:00:00+01:00 is before the year 1
        return parsed.astimezone(UTC)
    except OverflowError:
        raise _out_of_range(param) from None


def time_range(start: str | None, end: str | None, now: datetime) -> tuple[datetime | None, datetime]:
    """The range a query covers: no lower bound and `now` as the (exclusive) upper bound by default."""
    lower = parse_bound(start, now, "start_time")
    upper = parse_bound(end, now, "end_time") or now
    if lower is not None and lower >= upper:
        raise BeaconError("invalid_field", "`start_time` must be before `end_time`.", param="start_time")
    return lower, upper

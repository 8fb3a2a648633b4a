"""Datetimes as the API shows them: RFC 3339, UTC, millisecond precision, `Z` suffix."""

from __future__ import annotations

from datetime import UTC, datetime

# Go's zero time, as Alertmanager writes an unset time (an alert that has not ended) in its webhook bodies;
# its API's Go clients read it too.
GO_ZERO_TIME = "0001-01-01T00:00:00Z"


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso_ms(value: datetime) -> str:
    # isoformat is C and about 5x faster than strftime: a view of 12,000 alerts writes 24,000 of these.
    return value.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"  # drops "+00:00"


def iso_ms_or_none(value: datetime | None) -> str | None:
    return None if value is None else iso_ms(value)

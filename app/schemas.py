"""Building blocks shared by the request and response Structs of every area."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import msgspec

# Request datetimes must carry an offset (`Z` or `+02:00`); a naive one is a 400.
AwareDatetime = Annotated[datetime, msgspec.Meta(tz=True)]

# The instants a request may name are those events may have (ingest accepts 1970 to 2199). Beyond them a
# datetime could leave Python's range (years 1-9999) when converted to UTC or moved by an interval, and years
# before 1000 do not render as RFC 3339: each was a 500.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)  # exclusive
TIME_RANGE = "between 1970-01-01 and 2199-12-31 (UTC)"


def in_time_range(value: datetime) -> bool:
    return EARLIEST <= value < LATEST


class RequestBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base of every request body: unknown fields are a 400 `invalid_field`, never silently ignored; datetimes
    lie in the accepted range (a subclass with its own `__post_init__` calls this one)."""

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if isinstance(value, datetime) and not in_time_range(value):
                # A message that opens with the field's name in backticks names it (errors.from_validation).
                raise ValueError(f"`{name}` must lie {TIME_RANGE}")

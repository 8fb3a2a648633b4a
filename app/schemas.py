"""Building blocks shared by the request and response Structs of every area."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

# Request datetimes must carry an offset (`Z` or `+02:00`); a naive one is a 400.
AwareDatetime = Annotated[datetime, msgspec.Meta(tz=True)]


class RequestBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base of every request body: unknown fields are a 400 `invalid_field`, never silently ignored."""

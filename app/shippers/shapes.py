"""Which error shape a shipper's path answers in, and the status a shipper's client acts upon.

Log shippers retry what their protocol says is worth retrying (429 and 5xx) and drop the rest. A dataset
being deleted (Beacon's 409 `conflict`, "retry the request") is therefore answered as 503 with `Retry-After`,
so that the shipper sends the batch again instead of dropping it.
"""

from __future__ import annotations

from app.errors import BeaconError

RETRY_CONFLICT_SECONDS = "1"


def shipper_status(exc: BeaconError) -> tuple[int, dict[str, str]]:
    """The HTTP status and headers (`Retry-After`, …) of an error answered on a shipper's endpoint."""
    if exc.code == "conflict":
        return 503, {**exc.headers, "Retry-After": RETRY_CONFLICT_SECONDS}
    return exc.status, dict(exc.headers)

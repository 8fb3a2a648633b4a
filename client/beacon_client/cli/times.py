"""`--time now-5m` for the commands whose API takes only absolute times (annotations): relative times are
resolved here, against this machine's clock, in the same notation queries accept."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from beacon_client.notation.timespans import UnknownUnit, relative


def absolute(value: str | None, option: str, now: datetime | None = None) -> str | None:
    """`now`, `now-5m`, `now+1h` as RFC 3339 (UTC, milliseconds); anything else is passed on as it is (the
    service checks it)."""
    if value is None:
        return None
    try:
        moment = relative(value, now or datetime.now(UTC))
    except UnknownUnit as exc:
        raise click.BadParameter(f"{exc} (use d, h, m, s or ms, as in now-5m)", param_hint=option) from None
    except OverflowError:
        raise click.BadParameter("the time is out of range", param_hint=option) from None
    if moment is None:
        return value
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

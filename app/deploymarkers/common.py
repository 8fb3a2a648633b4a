"""What the deploy tools' endpoints share: lenient decoding (the tools send fields Beacon has no use for, and
Go's zero values), unix times, a tool's free text as a title and description, and where a marker goes when the
tool names no dataset."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec

from app.annotations.service import DESCRIPTION_CHARS, TITLE_CHARS
from app.errors import BeaconError
from app.inputs import check_json_body
from app.schemas import TIME_RANGE, in_time_range

T = TypeVar("T")
MAX_TEXT_CHARS = 10_000  # a tool's text kept whole (read back through its API); the title and description are cut


def decode(body: bytes, type_: type[T]) -> T:
    """The body as `type_` (a Struct that ignores unknown fields, as the tools' Go servers do); text PostgreSQL
    cannot store (a NUL, bytes that are not UTF-8) is a 400, as on every route (app/inputs.py)."""
    check_json_body(body)
    try:
        return msgspec.json.decode(body or b"{}", type=type_)
    except msgspec.ValidationError as exc:
        raise BeaconError("invalid_field", f"Bad request data: {exc}.") from None
    except msgspec.DecodeError as exc:
        raise BeaconError("invalid_json", f"The body is not valid JSON: {exc}.") from None


def from_unix(value: float, param: str, *, per_second: int = 1) -> datetime:
    """A unix time (seconds, or milliseconds with per_second=1000) in the range Beacon's times lie in."""
    try:
        found = datetime.fromtimestamp(value / per_second, UTC)
    except (OverflowError, OSError, ValueError):
        found = None
    if found is None or not in_time_range(found):
        raise BeaconError("invalid_field", f"`{param}` must be a unix time {TIME_RANGE}.", param=param)
    return found


def unix_ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def unix_s(value: datetime) -> int:
    return int(value.timestamp())


def split_text(text: str, param: str) -> tuple[str, str | None]:
    """A tool's one text as a title (its first line, cut to 256 characters) and a description (the whole text,
    when it says more than the title; cut to 2,048)."""
    if len(text) > MAX_TEXT_CHARS:
        raise BeaconError("invalid_field", f"`{param}` is over {MAX_TEXT_CHARS:,} characters.", param=param)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"
    if text.strip() == title:
        return title, None
    description = text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1] + "…"
    return title, description


def bounded(value: Any, param: str, limit: int = 16_384) -> Any:
    """A tool's free-form JSON (Grafana's `data`, PagerDuty's `custom_details`), kept if small."""
    if len(msgspec.json.encode(value)) > limit:
        raise BeaconError("invalid_field", f"`{param}` is over {limit:,} bytes as JSON.", param=param)
    return value

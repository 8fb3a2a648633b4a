"""What people type in the console's forms and on the command line: `name=value` label pairs, matcher lines and
durations such as `2h` or `1h30m`. Errors are ValueErrors with a message fit for the user; the console turns
them into 400 pages, the CLI into usage errors. The labels and matchers themselves are checked by the service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta

from app.routing.labels import describe

_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
MAX_DURATION = timedelta(days=3650)


def parse_duration(text: str) -> timedelta:
    """`90s`, `30m`, `2h`, `1d`, `1h30m`: a positive duration, at most ten years."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or match is None:
        raise ValueError(f"{text!r} is not a duration such as 30m, 2h, 1d or 1h30m")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    try:
        found = timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    except OverflowError:
        found = MAX_DURATION * 2
    if found <= timedelta(0) or found > MAX_DURATION:
        raise ValueError(f"{text!r}: a duration must be more than 0 and at most 10 years")
    return found


def lines(text: str | None) -> list[str]:
    """The non-blank lines of a text area, stripped."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def parse_label_pair(text: str) -> tuple[str, str]:
    """`team=payments` or `team="payments"` (the quotes are dropped; the value is otherwise taken as typed)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"{text!r} is not a label such as team=payments")
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return name.strip(), value


def parse_labels(pairs: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for text in pairs:
        name, value = parse_label_pair(text)
        if name in found:
            raise ValueError(f"label {name!r} is given twice")
        found[name] = value
    return found


def matchers_for(labels: dict[str, str]) -> list[str]:
    """Equality matchers for every label (a silence prefilled from an alert), in the quoted notation."""
    return [describe({name: labels[name]})[1:-1] for name in sorted(labels)]

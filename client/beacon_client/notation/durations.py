"""Durations as people type them, in the console's forms and on the command line: `90s`, `30m`, `2h`, `1d`,
`2w`, `1h30m`. Standard library only, so that the CLI's client commands can use it without loading the server
side (see tests/client/test_cli_imports.py)."""

from __future__ import annotations

import re
from datetime import timedelta

_DURATION = re.compile(r"(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
MAX_DURATION = timedelta(days=3650)


def parse_duration(text: str, *, examples: str = "30m, 2h, 1d, 2w or 1h30m") -> timedelta:
    """`90s`, `30m`, `2h`, `1d`, `2w`, `1h30m`: a positive duration, at most ten years. A ValueError's message is
    fit for the user (`examples`: what the caller takes, for it)."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or match is None:
        raise ValueError(f"{text!r} is not a duration such as {examples}")
    weeks, days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    try:
        found = timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    except OverflowError:
        found = MAX_DURATION * 2
    if found <= timedelta(0) or found > MAX_DURATION:
        raise ValueError(f"{text!r}: a duration must be more than 0 and at most 10 years")
    return found

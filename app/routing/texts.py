"""What people type in the console's forms and on the command line: `name=value` label pairs, matcher lines and
durations such as `2h` or `1h30m` (app/durations.py). Errors are ValueErrors with a message fit for the user; the
console turns them into 400 pages, the CLI into usage errors. The labels and matchers themselves are checked by
the service.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.durations import parse_duration as parse_duration  # the console's forms read it here
from app.routing.labels import describe


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

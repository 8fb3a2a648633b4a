"""Labels as people type them (`team=payments`, on the command line and in the console's forms) and as they are
shown (`{a="1", b="2"}`, Alertmanager's notation). Errors are ValueErrors with a message fit for the user. Which
names and values are allowed is the service's to check (app/routing/labels.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def quoted(value: str) -> str:
    """A label value in double quotes, with backslash, quote and newline escaped (as matchers read it back)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def describe(labels: Mapping[str, str]) -> str:
    """`{a="1", b="2"}` in Alertmanager's notation, sorted by name."""
    return "{" + ", ".join(f"{k}={quoted(labels[k])}" for k in sorted(labels)) + "}"


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
    """`name=value` pairs as a label set; a name given twice is an error."""
    found: dict[str, str] = {}
    for text in pairs:
        name, value = parse_label_pair(text)
        if name in found:
            raise ValueError(f"label {name!r} is given twice")
        found[name] = value
    return found

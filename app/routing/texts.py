"""The console's text areas: one matcher or label per line, and matchers made from an alert's labels. The
notations themselves (`name=value` labels, durations such as `2h`) are beacon_client.notation's, which the CLI
reads too; the labels and matchers are checked by the service.
"""

from __future__ import annotations

from beacon_client.notation.labels import quoted


def lines(text: str | None) -> list[str]:
    """The non-blank lines of a text area, stripped."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def matchers_for(labels: dict[str, str]) -> list[str]:
    """Equality matchers for every label (a silence prefilled from an alert), in the quoted notation."""
    return [f"{name}={quoted(labels[name])}" for name in sorted(labels)]

"""Destinations' limits on the length of a message's texts, declared per adapter and applied in one place.

An adapter states them as its class attribute `text_limits` (Apprise's `body_maxlen`, for JSON payloads): a path
into the payload -> the most characters the destination takes there. `"summary"` is a top-level key,
`"payload.summary"` one inside an object, `"embeds[].title"` the key of every element of a list. Whatever a
template made longer is cut there, ending in "…", so an over-long monitor name cannot make a destination refuse
the message. Paths that are absent, or hold no text, are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def truncate_chars(value: Any, limit: int, end: str = "…") -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: max(limit - len(end), 0)] + end


def fit_texts(payload: dict[str, Any], limits: Mapping[str, int]) -> dict[str, Any]:
    """`payload` with each text at a path of `limits` cut to its limit (in place; returned for convenience)."""
    for path, limit in limits.items():
        _fit(payload, path.split("."), limit)
    return payload


def _fit(node: Any, path: Sequence[str], limit: int) -> None:
    if not isinstance(node, dict):
        return
    key, rest = path[0], path[1:]
    each = key.endswith("[]")
    key = key.removesuffix("[]")
    value = node.get(key)
    if each and isinstance(value, list):
        if rest:
            for item in value:
                _fit(item, rest, limit)
        else:
            node[key] = [truncate_chars(v, limit) if isinstance(v, str) else v for v in value]
    elif rest:
        _fit(value, rest, limit)
    elif isinstance(value, str):
        node[key] = truncate_chars(value, limit)

"""Nested objects to dot paths: `{"http": {"status": 500}}` -> `{"http.status": 500}`.

Rules (tested in tests/unit/ingest/test_flatten.py):
- arrays stay values, whatever they hold; `null` stays a value; an empty object stays the value `{}`;
- a key that already holds dots is kept as it is (`{"a.b": 1}` and `{"a": {"b": 1}}` both give `a.b`);
- when two keys flatten to the same path, the later one in the event wins, as with a repeated JSON key.
"""

from __future__ import annotations

from typing import Any

# Objects nested deeper than this fail the event (clearly, rather than as a RecursionError): far beyond any
# real log event, well within Python's recursion limit.
MAX_DEPTH = 256


class TooDeep(ValueError):
    pass


def _into(out: dict[str, Any], prefix: str, obj: dict[str, Any], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise TooDeep(f"event nests objects more than {MAX_DEPTH} levels deep")
    for key, value in obj.items():
        if type(value) is dict and value:
            _into(out, prefix + key + ".", value, depth + 1)
        else:
            out[prefix + key] = value


def flatten(event: dict[str, Any]) -> dict[str, Any]:
    """A new flat dict; `event` is left as it was."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if type(value) is dict and value:
            _into(out, key + ".", value, 1)
        else:
            out[key] = value
    return out


JSON_TYPES: dict[type, str] = {
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "array",
    dict: "object",
}


def has_nul(value: Any) -> bool:
    """True when a string (or key) anywhere in `value` holds U+0000, which PostgreSQL's jsonb cannot store."""
    if type(value) is str:
        return "\x00" in value
    if type(value) is dict:
        return any("\x00" in k or has_nul(v) for k, v in value.items())
    if type(value) is list or type(value) is tuple:
        return any(has_nul(v) for v in value)
    return False

"""Loki's label sets: `{name="value", ...}` as the protobuf push carries them (Go string literals for values), and
the rule for label names."""

from __future__ import annotations

import re

NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_PAIR = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*')
_ESCAPE = re.compile(r"\\(?:([\\\"'abfnrtv])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{3})|(.))")
_SIMPLE = {"\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class BadLabels(ValueError):
    pass


def _unescape(match: re.Match[str]) -> str:
    simple, hex2, hex4, hex8, octal, unknown = match.groups()
    if simple is not None:
        return _SIMPLE[simple]
    if unknown is not None:
        raise BadLabels(f"unknown escape sequence \\{unknown}")
    code = int(hex2 or hex4 or hex8, 16) if octal is None else int(octal, 8)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise BadLabels("escape sequence is not a valid character")
    return chr(code)


def parse(text: str) -> dict[str, str]:
    """`{a="1", b="2"}` -> {"a": "1", "b": "2"}; BadLabels says what is wrong."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise BadLabels('labels must be written {name="value", ...}')
    inner, pos, found = text[1:-1], 0, {}
    while inner[pos:].strip():
        match = _PAIR.match(inner, pos)
        if match is None:
            raise BadLabels(f"cannot read the labels at character {pos + 2}")
        name, raw = match.groups()
        if name in found:
            raise BadLabels(f"label {name!r} is given twice")
        found[name] = _ESCAPE.sub(_unescape, raw) if "\\" in raw else raw
        pos = match.end()
        if pos < len(inner):
            if inner[pos] != ",":
                raise BadLabels(f"expected ',' between labels at character {pos + 2}")
            pos += 1
    return found

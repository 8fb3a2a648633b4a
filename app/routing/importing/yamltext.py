"""Reading an Alertmanager configuration: the YAML text checked and bounded, Go durations, Alertmanager's
matcher syntax. Errors are 400s naming the place in the YAML (`route.routes[1].group_wait`).

The text is untrusted: a YAML alias can stand for a whole subtree, so a few lines can describe a tree of a
billion nodes ("billion laughs"); PyYAML shares the aliased objects, but anything walking the result would not.
`load` walks it once with a budget (nodes and depth), and refuses NUL characters (PostgreSQL's text cannot hold
them) and keys that are not strings, so that the rest of the importer walks a tree of bounded size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from app.errors import BeaconError
from app.routing.matchers import Matcher, MatcherError, parse_matcher

MAX_BYTES = 1024 * 1024  # an alertmanager.yml of a large organisation is tens of kilobytes
MAX_NODES = 200_000
MAX_DEPTH = 64

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def bad(path: str, message: str) -> BeaconError:
    return BeaconError("invalid_field", f"`{path}`: {message}" if path else message, param=path or None)


def load(body: bytes) -> dict[str, Any]:
    """The configuration as plain data (dicts with string keys, lists, scalars); a 400 saying what is wrong."""
    if len(body) > MAX_BYTES:
        raise BeaconError(
            "payload_too_large", f"The configuration is {len(body):,} bytes; at most {MAX_BYTES:,} are imported."
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BeaconError("invalid_yaml", f"The configuration is not UTF-8 text (byte {exc.start}).") from None
    try:
        data = yaml.load(text, Loader=_LOADER)  # a safe loader: plain data only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise BeaconError("invalid_yaml", f"The configuration is not valid YAML{where}: {exc.problem}.") from None
    except (yaml.YAMLError, RecursionError) as exc:
        reason = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise BeaconError("invalid_yaml", f"The configuration is not valid YAML: {reason}.") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BeaconError("invalid_yaml", "The configuration must be a YAML mapping (route:, receivers:, …).")
    _check_tree(data)
    return data


def _check_tree(root: Any) -> None:
    stack: list[tuple[Any, str, int]] = [(root, "", 0)]
    seen = 0
    while stack:
        node, path, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES or depth > MAX_DEPTH:
            raise BeaconError(
                "invalid_yaml",
                f"The configuration is too large once its aliases are expanded (more than {MAX_NODES:,} values "
                f"or {MAX_DEPTH} levels).",
            )
        if isinstance(node, str):
            if "\x00" in node:
                raise bad(path, "holds a NUL character (U+0000), which is not allowed.")
        elif isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str):
                    raise bad(path, f"the key {key!r} is not a string.")
                if "\x00" in key:
                    raise bad(path, "a key holds a NUL character (U+0000), which is not allowed.")
                stack.append((value, join(path, key), depth + 1))
        elif isinstance(node, list):
            stack.extend((value, f"{path}[{i}]", depth + 1) for i, value in enumerate(node))


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def items(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """`(path[i], element)` of a YAML list (absent: none)."""
    if value is None:
        return
    if not isinstance(value, list):
        raise bad(path, "must be a list.")
    for i, element in enumerate(value):
        yield f"{path}[{i}]", element


def mapping(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad(path, "must be a mapping.")
    return value


def text(value: Any, path: str) -> str:
    """A scalar as Alertmanager reads it into a string field (numbers as written)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise bad(path, "must be a string (quote it).")
    return value if isinstance(value, str) else str(value)


def flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise bad(path, "must be true or false.")
    return value


# Prometheus' model.ParseDuration (Alertmanager's timers): units from years down to milliseconds, largest first.
_DURATION = re.compile(r"(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?")
_UNIT_MS = (365 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000, 1)


def duration_ms(value: Any, path: str) -> int:
    """A Go duration as Alertmanager reads it (`30s`, `5m`, `4h`, `1h30m`, `500ms`, `0`), in milliseconds."""
    raw = text(value, path) if not isinstance(value, int) or isinstance(value, bool) else str(value)
    if raw == "0":
        return 0
    found = _DURATION.fullmatch(raw)
    if not raw or found is None:
        raise bad(path, f"{raw!r} is not a duration such as 30s, 5m, 4h or 1h30m.")
    return sum(int(g) * unit for g, unit in zip(found.groups(), _UNIT_MS, strict=True) if g)


def am_matchers(line: str, path: str) -> list[Matcher]:
    """The matchers of one entry of a `matchers` list, read as Alertmanager's `labels.ParseMatchers` reads it:
    one or several, comma-separated, optionally in braces (`{a="1", b=~"x|y"}`); values quoted or not."""
    body = line.strip()
    body = body.removeprefix("{").removesuffix("}")
    tokens, token, quoted, escaped = [], "", False, False
    for ch in body:
        if not quoted and ch == ",":
            tokens.append(token)
            token = ""
            continue
        token += ch
        if ch == '"' and not escaped:
            quoted = not quoted
        escaped = ch == "\\" and not escaped
    if token.strip():
        tokens.append(token)
    found = []
    for token in tokens:
        found.append(am_matcher(token, path))
    return found


_AM_MATCHER = re.compile(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(=~|=|!=|!~)\s*(.*?)\s*", re.DOTALL)


def am_matcher(token: str, path: str) -> Matcher:
    """One matcher in Alertmanager's syntax, as a Beacon `Matcher` (its escapes: `\\"`, `\\\\`, `\\n`; a stray
    backslash is literal)."""
    shape = _AM_MATCHER.fullmatch(token)
    if shape is None:
        raise bad(path, f'{token.strip()!r} is not a matcher such as team="payments" or severity=~"page|critical".')
    name, op, raw = shape.groups()
    quoted = raw.startswith('"')
    if quoted:
        if len(raw) < 2 or not raw.endswith('"'):
            raise bad(path, f"{token.strip()!r}: the value's quotes do not close.")
        raw = raw[1:-1]
    value: list[str] = []
    chars = iter(enumerate(raw))
    for i, ch in chars:
        if ch == "\\" and i < len(raw) - 1:
            _, nxt = next(chars)
            value.append({"n": "\n", '"': '"', "\\": "\\"}.get(nxt, "\\" + nxt))
        elif ch == '"':
            raise bad(path, f'{token.strip()!r}: a quote inside the value must be escaped as \\".')
        else:
            value.append(ch)
    return matcher(name, op, "".join(value), path)


def matcher(name: str, op: str, value: str, path: str) -> Matcher:
    """A matcher from its parts, checked as Beacon checks one (label name, regex)."""
    if ":" in name:
        raise bad(path, f"the label name {name!r} holds a colon, which a Beacon label name cannot.")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    try:
        return parse_matcher(f'{name}{op}"{escaped}"')
    except MatcherError as exc:
        raise bad(path, f"{name}{op}{value!r}: {exc}.") from None

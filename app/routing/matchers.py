"""Label matchers in Alertmanager's syntax: `name="value"`, `name!="value"`, `name=~"regex"`, `name!~"regex"`.

Quotes are optional for simple values (no spaces, quotes, commas or braces). A regex must match the whole value
(anchored), and an absent label reads as "". Regexes run on RE2 (`google-re2`): its matching time is linear in
the input whatever the pattern, so a user-supplied matcher such as `(a+)+$` cannot stall a process the way
Python's backtracking `re` would (tests/unit/routing/test_matchers.py shows both).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import re2

from app.errors import BeaconError
from app.routing.labels import LABEL_NAME
from beacon_client.notation.labels import quoted

MAX_MATCHER_CHARS = 2048
OPERATORS = ("=~", "!~", "!=", "=")
MATCHER_SHAPE = re.compile(r"\s*(" + LABEL_NAME.pattern + r")\s*(=~|!~|!=|=)\s*(.*?)\s*", re.DOTALL)
_UNQUOTED_FORBIDDEN = set("\"',{}") | {" ", "\t", "\n", "\r"}
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a bad pattern is the user's 400, not a line in the server's log
    options.never_capture = True
    return options


_RE2_OPTIONS = _options()


def compile_regex(pattern: str) -> Any:
    """A user's regular expression, compiled by RE2 (linear time) without logging a bad one; raises re2.error."""
    return re2.compile(pattern, _RE2_OPTIONS)


class MatcherError(ValueError):
    pass


@dataclass(frozen=True)
class Matcher:
    name: str
    op: str
    value: str
    _regex: Any = field(default=None, compare=False, repr=False)

    def matches(self, labels: Mapping[str, str]) -> bool:
        actual = labels.get(self.name, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        found = self._regex.fullmatch(actual) is not None
        return found if self.op == "=~" else not found

    def __str__(self) -> str:
        return f"{self.name}{self.op}{quoted(self.value)}"


def _unquote(text: str) -> str:
    body = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            raise MatcherError('a quote inside a quoted value must be escaped as \\"')
        if ch == "\\":
            if i + 1 >= len(body) or body[i + 1] not in _ESCAPES:
                raise MatcherError('inside quotes only \\", \\\\, \\n and \\t are escapes')
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_matcher(text: str) -> Matcher:
    """One matcher; MatcherError says what is wrong with it."""
    if len(text) > MAX_MATCHER_CHARS:
        raise MatcherError(f"a matcher is at most {MAX_MATCHER_CHARS} characters")
    shape = MATCHER_SHAPE.fullmatch(text)
    if shape is None:
        raise MatcherError(
            'expected `name=value`, `name!=value`, `name=~regex` or `name!~regex` (e.g. team="payments")'
        )
    name, op, raw = shape.groups()
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        value = _unquote(raw)
    elif raw.startswith('"') or raw.endswith('"'):
        raise MatcherError("the value's quotes do not close")
    elif any(ch in _UNQUOTED_FORBIDDEN for ch in raw) or (raw and raw[0] in "=!~"):
        raise MatcherError("quote a value that holds spaces, quotes, commas or braces")
    else:
        value = raw
    regex = None
    if op in ("=~", "!~"):
        try:
            regex = compile_regex(value)
        except re2.error as exc:
            detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            raise MatcherError(f"invalid regular expression: {detail}") from None
    return Matcher(name, op, value, regex)


def check_matcher(text: str, param: str) -> Matcher:
    """parse_matcher, with a bad matcher as a 400 naming it."""
    try:
        return parse_matcher(text)
    except MatcherError as exc:
        raise BeaconError("invalid_field", f"Invalid matcher {text!r}: {exc}.", param=param) from None


def check_matchers(texts: Sequence[str], param: str, *, code: str = "invalid_field") -> list[Matcher]:
    """Every matcher of a list; the error names the one at fault (`param[i]`)."""
    found = []
    for i, text in enumerate(texts):
        try:
            found.append(parse_matcher(text))
        except MatcherError as exc:
            where = f"{param}[{i}]" if code == "invalid_field" else param
            raise BeaconError(code, f"Invalid matcher {text!r}: {exc}.", param=where) from None
    return found


def all_match(matchers: Iterable[Matcher], labels: Mapping[str, str]) -> bool:
    for m in matchers:  # a loop, not all() over a generator: twice as fast, and views call it per alert and route
        if not m.matches(labels):
            return False
    return True

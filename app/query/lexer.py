"""Tokens of the query language (see GRAMMAR.md), produced on demand for the recursive-descent parser.

The lexer is pulled one token at a time so that the parser can switch it into raw mode for the body of a
`datetime(...)` literal, whose text (`2026-11-21T10:00:00Z`) is not made of ordinary tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from app.query.errors import QueryError
from beacon_client.notation.timespans import TIMESPAN_UNITS


class Kind(Enum):
    IDENT = "identifier"
    STRING = "string"
    LONG = "integer"
    REAL = "number"
    TIMESPAN = "timespan"
    OP = "symbol"
    EOF = "end of query"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str  # the source text (for OP and IDENT, the symbol or name itself)
    pos: int  # offset of the first character in the query text
    value: object = None  # decoded value for STRING, LONG, REAL, TIMESPAN

    def describe(self) -> str:
        if self.kind is Kind.EOF:
            return "the end of the query"
        return repr(self.text) if len(self.text) <= 40 else repr(self.text[:37] + "...")


# Longest symbols first, so that `<=` wins over `<` and `!contains` over `!`.
_SYMBOLS = sorted(
    [
        "|",
        ",",
        "(",
        ")",
        "[",
        "]",
        "=",
        "==",
        "!=",
        "<>",
        "<",
        "<=",
        ">",
        ">=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "..",
        ".",
        "=~",
        "!~",
    ],
    key=len,
    reverse=True,
)
# The string operators (`contains`, ...), which the parser reads as binary operators.
STRING_OPS = (
    "contains",
    "contains_cs",
    "startswith",
    "startswith_cs",
    "endswith",
    "endswith_cs",
    "has",
    "has_cs",
)
# Negated word operators: `!in`, `!contains`, ... lexed as one symbol.
_BANG_WORDS = ("in", *STRING_OPS, "between")
# Hyphenated operator names that would otherwise lex as `project - away`.
_HYPHENATED = ("project-away",)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _is_digit(ch: str) -> bool:
    """An ASCII digit: `str.isdigit()` also accepts superscripts and other scripts' digits, which int() and
    float() then refuse or read differently."""
    return len(ch) == 1 and "0" <= ch <= "9"


def _is_ident_start(ch: str) -> bool:
    return ch.isascii() and (ch.isalpha() or ch == "_")


def _is_ident_part(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


class Lexer:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        if "\0" in source:  # PostgreSQL text cannot hold NUL: refuse it here rather than fail at run time
            raise QueryError("the query text contains a NUL character", source.index("\0"))

    def _skip_space(self) -> None:
        src, n = self.source, len(self.source)
        while self.pos < n:
            ch = src[self.pos]
            if ch.isspace():
                self.pos += 1
            elif src.startswith("//", self.pos):  # line comment
                end = src.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            else:
                return

    def next(self) -> Token:
        self._skip_space()
        src, start = self.source, self.pos
        if start >= len(src):
            return Token(Kind.EOF, "", start)
        ch = src[start]
        if _is_ident_start(ch):
            return self._word()
        if _is_digit(ch) or (ch == "." and _is_digit(src[start + 1 : start + 2])):
            return self._number()
        if ch in "\"'":
            return self._string(start, verbatim=False)
        if ch == "@" and src[start + 1 : start + 2] in ("'", '"'):
            return self._string(start, verbatim=True)
        if ch == "!":
            for word in sorted(_BANG_WORDS, key=len, reverse=True):
                end = start + 1 + len(word)
                if src.startswith(word, start + 1) and not _is_ident_part(src[end : end + 1]):
                    self.pos = end
                    return Token(Kind.OP, "!" + word, start)
        for sym in _SYMBOLS:
            if src.startswith(sym, start):
                self.pos = start + len(sym)
                return Token(Kind.OP, sym, start)
        raise QueryError(f"unexpected character {ch!r}", start)

    def _word(self) -> Token:
        src, start = self.source, self.pos
        end = start + 1
        while end < len(src):
            if _is_ident_part(src[end]):
                end += 1
            elif src[end] == "." and _is_ident_start(src[end + 1 : end + 2]):  # dotted path: http.status
                end += 2
            else:
                break
        for word in _HYPHENATED:
            if src.startswith(word, start) and not _is_ident_part(src[start + len(word) : start + len(word) + 1]):
                self.pos = start + len(word)
                return Token(Kind.IDENT, word, start)
        self.pos = end
        return Token(Kind.IDENT, src[start:end], start)

    def _number(self) -> Token:
        src, start = self.source, self.pos
        end = start
        while end < len(src) and _is_digit(src[end]):
            end += 1
        is_real = False
        # A `.` starts a fraction only when a digit follows: `1..5` is `1`, `..`, `5`.
        if end < len(src) and src[end] == "." and _is_digit(src[end + 1 : end + 2]):
            is_real = True
            end += 1
            while end < len(src) and _is_digit(src[end]):
                end += 1
        if end < len(src) and src[end] in "eE":
            exp = end + 1
            if exp < len(src) and src[exp] in "+-":
                exp += 1
            if exp < len(src) and _is_digit(src[exp]):
                is_real = True
                end = exp
                while end < len(src) and _is_digit(src[end]):
                    end += 1
        text = src[start:end]
        # Whole numbers of more than 20 digits fit no 64-bit value nor a timespan (and int() refuses more than
        # 4,300 digits): refused before they are converted.
        too_long = not is_real and len(text.lstrip("0")) > 20
        unit_end = end
        while unit_end < len(src) and _is_ident_part(src[unit_end]):
            unit_end += 1
        if unit_end > end:  # letters glued to the number: a timespan such as 5m, 1.5h, 100ms
            unit = src[end:unit_end]
            if unit not in TIMESPAN_UNITS:
                raise QueryError(
                    f"unknown timespan unit {unit!r} (use d, h, m, s, ms or us, as in 5m or 1h)",
                    end,
                )
            self.pos = unit_end
            try:
                span = None if too_long else TIMESPAN_UNITS[unit] * (float(text) if is_real else int(text))
            except OverflowError:  # beyond timedelta's ±999,999,999 days, or an infinite float
                span = None
            if span is None:
                raise QueryError(
                    f"timespan {_cut(src[start:unit_end])} is out of range (at most 999,999,999 days)", start
                )
            return Token(Kind.TIMESPAN, src[start:unit_end], start, span)
        if too_long:
            raise QueryError(f"whole number {_cut(text)} is out of range (it must fit in 64 bits)", start)
        self.pos = end
        if is_real:
            value = float(text)
            if not math.isfinite(value):
                raise QueryError(f"number {_cut(text)} is out of range", start)
            return Token(Kind.REAL, text, start, value)
        return Token(Kind.LONG, text, start, int(text))

    def _string(self, start: int, *, verbatim: bool) -> Token:
        src = self.source
        i = start + (2 if verbatim else 1)
        quote = src[i - 1]
        out: list[str] = []
        while i < len(src):
            ch = src[i]
            if ch == quote:
                if verbatim and src[i + 1 : i + 2] == quote:  # @"a""b" is a"b
                    out.append(quote)
                    i += 2
                    continue
                self.pos = i + 1
                return Token(Kind.STRING, src[start : i + 1], start, "".join(out))
            if ch == "\n":
                break
            if ch == "\\" and not verbatim:
                esc = src[i + 1 : i + 2]
                if esc not in _ESCAPES:
                    raise QueryError(f"unknown escape sequence '\\{esc}' in string", i)
                out.append(_ESCAPES[esc])
                i += 2
                continue
            out.append(ch)
            i += 1
        raise QueryError("unterminated string literal", start)

    def raw_until_close_paren(self) -> tuple[str, int]:
        """The text up to (not including) the next `)`, for `datetime(...)`; the `)` is left for the parser."""
        self._skip_space()
        start = self.pos
        end = self.source.find(")", start)
        if end < 0:
            raise QueryError("expected ')' to close datetime(", start)
        self.pos = end
        return self.source[start:end].strip(), start

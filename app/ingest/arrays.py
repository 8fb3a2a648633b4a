"""Splitting a JSON-array body into its elements as it streams in, holding at most one element (plus a chunk).

A 100 MB array used to be read whole and then decoded: eight such requests at once held a gigabyte. Here each
decompressed chunk is cut after its last complete element, and those elements go on (as raw JSON text) to
the row builder, which decodes each as it decodes an NDJSON line. Finding where an element ends needs a JSON
parser, and msgspec's is used (a pure Python scanner is 20 to 100 times slower on dense JSON):

1. The usual case: a chunk holds many elements and ends inside one. The last `}` `,` `{` in the chunk is
   most likely the gap between two elements: decoding `[` + everything before that comma + `]` as a list of
   `msgspec.Raw` (which checks the syntax but builds nothing) succeeds exactly when it is.
2. When that fails twice (a `},{` inside a string, elements that are not objects), the elements are taken
   one at a time: decoding from an element's start reports "trailing characters (byte N)" at the first byte
   after that element, which is where the next one begins (a test pins this message of msgspec's).
3. When not even one element is complete, the next attempt waits until the held bytes have doubled, so a
   large element costs a few passes, not one per chunk; one larger than `max_element` bytes is refused.

At the end of the body what is left is decoded whole as `[` + rest, which also checks the closing `]`.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw]).decode
_RAW = msgspec.json.Decoder(msgspec.Raw).decode
_WS = re.compile(rb"[ \t\r\n]*")
_AT = re.compile(r"\(byte (\d+)\)$")
_ERRORS = (msgspec.DecodeError, RecursionError)
_BRACE_OPEN, _BRACE_CLOSE, _BRACKET_CLOSE, _COMMA = 0x7B, 0x7D, 0x5D, 0x2C
_SPACE = frozenset(b" \t\r\n")
_NUMBER_END = frozenset(b"0123456789.eE+-")
CANDIDATE_TRIES = 2
CANDIDATE_SCAN = 64  # `{` looked at from the end of a chunk, at most, for the gap between two elements

# Where the splitter is: before the body's first value; right after `[`; where an element must come (after
# a comma); after an element; after the closing `]`; inside a body that is one object.
START, FIRST, ELEMENT, AFTER, END, OBJECT = range(6)


class BadArray(ValueError):
    """The body is not a JSON array (or one object): the message says what is wrong."""


class ElementTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"an element runs past {limit} bytes")
        self.limit = limit


class ArraySplitter:
    def __init__(self, max_element: int) -> None:
        self._max = max_element
        self._buf = bytearray()
        self._pos = 0  # bytes of `_buf` already consumed
        self._state = START
        self._wait = 0  # do not look for an element again until this many bytes are held

    def feed(self, chunk: bytes) -> list[Any]:
        """The elements completed by `chunk`, as raw JSON (bytes-like)."""
        if self._pos:
            del self._buf[: self._pos]  # cheap: a bytearray drops its head without moving the rest
            self._pos = 0
        if not self._buf and self._state != OBJECT:
            chunk = _lstrip(chunk)  # padding between elements is dropped as it comes, in one C pass
        self._buf += chunk
        return self._drain(final=False)

    def finish(self) -> list[Any]:
        """The last elements, at the end of the body; BadArray unless the body was a whole array or object."""
        out = self._drain(final=True)
        if self._state == OBJECT:
            return [bytes(self._buf[self._pos :])]
        if self._state != END:
            raise BadArray("the body ends before the array does")
        return out

    def _drain(self, *, final: bool) -> list[Any]:
        buf = self._buf
        out: list[Any] = []
        while True:
            if self._state == OBJECT:
                if len(buf) - self._pos > self._max:
                    raise ElementTooLarge(self._max)
                return out
            pos = self._pos = _WS.match(buf, self._pos).end()  # type: ignore[union-attr]
            if pos == len(buf):
                return out
            byte = buf[pos]
            if self._state == START:
                if byte == 0x5B:  # [
                    self._pos, self._state = pos + 1, FIRST
                elif byte == _BRACE_OPEN:
                    self._state = OBJECT
                else:
                    raise BadArray("the body must be a JSON array of event objects (or one object)")
            elif self._state == FIRST and byte == _BRACKET_CLOSE:
                self._pos, self._state = pos + 1, END
            elif self._state in (FIRST, ELEMENT):
                if byte == _BRACKET_CLOSE:
                    raise BadArray("an element is missing after a comma")
                found = self._elements(final)
                if not found:
                    return out
                out += found
            elif self._state == AFTER:
                if byte == _COMMA:
                    self._pos, self._state = pos + 1, ELEMENT
                elif byte == _BRACKET_CLOSE:
                    self._pos, self._state = pos + 1, END
                else:
                    raise BadArray(f"expected `,` or `]` after an element, found {bytes([byte])!r}")
            else:  # END
                raise BadArray("the body goes on after the array's closing `]`")

    def _elements(self, final: bool) -> list[Any]:
        """Complete elements from `_pos` (an element's first byte) on; moves `_pos` and `_state` past them."""
        held = len(self._buf) - self._pos
        if final:
            try:  # the rest must be whole elements and the closing `]`
                found = _RAW_LIST(b"[" + self._buf[self._pos :])
            except _ERRORS as exc:
                raise BadArray(_reason(exc)) from None
            self._pos, self._state = len(self._buf), END
            return found
        if held < self._wait and held <= self._max:
            return []
        found = self._before_last_gap() or self._one_by_one()
        if found:
            self._wait = 0
        elif held > self._max:
            raise ElementTooLarge(self._max)
        else:
            self._wait = 2 * held
        return found

    def _before_last_gap(self) -> list[Any]:
        buf, start = self._buf, self._pos
        end = len(buf)
        tries = 0
        for _ in range(CANDIDATE_SCAN):
            brace = buf.rfind(b"{", start, end)
            if brace < 0:
                return []
            end = brace
            comma = _back(buf, brace - 1, start)
            if comma < 0 or buf[comma] != _COMMA:
                continue
            close = _back(buf, comma - 1, start)
            if close < 0 or buf[close] != _BRACE_CLOSE:
                continue
            try:
                found = _RAW_LIST(b"[" + buf[start:comma] + b"]")
            except _ERRORS:
                tries += 1
                if tries == CANDIDATE_TRIES:
                    return []
                continue
            self._pos, self._state = comma + 1, ELEMENT
            return found
        return []

    def _one_by_one(self) -> list[Any]:
        data = bytes(self._buf[self._pos :])
        view = memoryview(data)
        found: list[Any] = []
        at = 0
        while at < len(data):
            try:
                _RAW(view[at:])
            except _ERRORS as exc:
                text = str(exc)
                at_byte = _AT.search(text)
                stop = at + int(at_byte.group(1)) if at_byte else -1
                if "trailing characters" in text and stop > at:
                    after = stop - 1  # msgspec counts the byte it stopped at
                elif "truncated" in text or stop >= len(data):
                    break  # the element goes on in the next chunk (a number cut short is "invalid" at the end)
                else:
                    raise BadArray(_reason(exc)) from None
            else:  # the rest is one value: whole, unless it is a number the next chunk goes on with
                if data[-1] in _NUMBER_END:
                    break
                found.append(view[at : _end(data, at, len(data))])
                self._pos, self._state = len(self._buf), AFTER
                return found
            sep = data[after]
            if sep not in (_COMMA, _BRACKET_CLOSE):
                raise BadArray(f"expected `,` or `]` after an element, found {bytes([sep])!r}")
            found.append(view[at : _end(data, at, after)])
            if sep == _BRACKET_CLOSE:
                self._pos, self._state = self._pos + after + 1, END
                return found
            at = _WS.match(data, after + 1).end()  # type: ignore[union-attr]
        if found:
            self._pos, self._state = self._pos + at, ELEMENT
        return found


def _lstrip(chunk: bytes) -> bytes:
    """`chunk` without its leading JSON whitespace. bytes.lstrip() is several times faster with no argument,
    but it also strips \\v and \\f, which JSON does not allow: a chunk with those is left to the parser."""
    rest = chunk.lstrip()
    cut = len(chunk) - len(rest)
    if cut and (chunk.find(b"\v", 0, cut) >= 0 or chunk.find(b"\f", 0, cut) >= 0):
        return chunk
    return rest


def _end(data: bytes, start: int, stop: int) -> int:
    """`stop`, less the whitespace before it (an element's bytes end where its value does)."""
    return stop if data[stop - 1] not in _SPACE else start + len(data[start:stop].rstrip(b" \t\r\n"))


def _reason(exc: BaseException) -> str:
    return "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)


def _back(buf: bytearray, i: int, start: int) -> int:
    """The index of the last byte at or before `i` (not before `start`) that is not whitespace, or -1."""
    while i >= start and buf[i] in _SPACE:
        i -= 1
    return i if i >= start else -1

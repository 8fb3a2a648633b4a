"""The protobuf wire format, just enough to take apart a message that does not decode whole.

A message is a sequence of fields, each a key (field number and wire type, a varint) and a value: a varint, 8
or 4 bytes, or a length-prefixed run of bytes (strings, bytes and embedded messages). `fields` lists the
length-prefixed values by field number, so that each embedded message can be decoded alone, and the part
there is of one that a truncated body cuts short.
"""

from __future__ import annotations

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class _Broken(Exception):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _Broken
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> tuple[list[tuple[int, bytes, bool]], bool]:
    """The message's length-prefixed fields as (field number, bytes, cut short), in order, and whether the data
    is corrupt (a field that cannot be read, after which nothing can be located). A field cut short (the last
    one of a truncated body) is listed with the bytes there are: never to be decoded whole (it may happen to
    decode, as a message missing its end), but to be taken apart for the complete messages inside it."""
    found: list[tuple[int, bytes, bool]] = []
    pos, end = 0, len(data)
    try:
        while pos < end:
            key, pos = _varint(data, pos)
            number, kind = key >> 3, key & 7
            if number == 0:
                raise _Broken
            if kind == _VARINT:
                _, pos = _varint(data, pos)
            elif kind == _I64:
                pos += 8
            elif kind == _I32:
                pos += 4
            elif kind == _LEN:
                size, pos = _varint(data, pos)
                if pos + size > end:
                    found.append((number, data[pos:], True))
                    return found, False
                found.append((number, data[pos : pos + size], False))
                pos += size
            else:  # groups (deprecated, never in OTLP) and invalid types
                raise _Broken
            if pos > end:
                raise _Broken
    except _Broken:
        return found, True
    return found, False

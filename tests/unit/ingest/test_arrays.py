"""JSON-array bodies split into elements as they stream in (app/ingest/arrays.py): the same elements as
decoding the whole array, however the body is cut into chunks, and never more than one element held."""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import msgspec
import pytest

from app.ingest import arrays
from app.ingest.arrays import ArraySplitter, BadArray, ElementTooLarge


def split(body: bytes, cuts: list[int], max_element: int = 1 << 20) -> list[Any]:
    splitter = ArraySplitter(max_element)
    out: list[Any] = []
    last = 0
    for cut in sorted(cuts):
        out += [msgspec.json.decode(e) for e in splitter.feed(body[last:cut])]
        last = cut
    out += [msgspec.json.decode(e) for e in splitter.feed(body[last:])]
    return out + [msgspec.json.decode(e) for e in splitter.finish()]


def random_cuts(rng: random.Random, body: bytes, n: int) -> list[int]:
    return [rng.randrange(len(body) + 1) for _ in range(n)]


TRICKY = [
    {"a": 1, "b": {"c": [1, {"d": "},{"}]}, "e": "x"},
    {"s": '"},{"\\', "t": "]", "u": "[{", "v": "\\\\"},
    {"nested": {"deep": {"deeper": {"x": "}, {"}}}, "w": 1},
    {},
    [],
    [1, [2, [3]], {"k": "v"}],
    "a string with }, { inside",
    12345678901234567890123,
    -1.5e-7,
    True,
    None,
    {"ünïcode": "ß…€", "emoji": "\U0001f600"},
]


@pytest.mark.parametrize("spacing", ["compact", "spaced", "newlines"])
def test_any_chunking_gives_the_elements_of_the_whole_array(spacing: str) -> None:
    rng = random.Random(15)
    elements = [*TRICKY * 20, *({"i": i, "msg": "x" * rng.randrange(300)} for i in range(200))]
    rng.shuffle(elements)
    body = msgspec.json.encode(elements)
    if spacing == "spaced":
        body = b" \t" + json.dumps(elements, separators=(" ,  ", " : "), ensure_ascii=False).encode() + b" "
    elif spacing == "newlines":
        body = b"\n[\n" + b",\r\n".join(json.dumps(e, indent=1).encode() for e in elements) + b"\n]\n\n"
    assert msgspec.json.decode(body) == elements
    for n in (0, 1, 5, 50, 500, len(body) // 3):
        assert split(body, random_cuts(rng, body, n)) == elements, n


def test_a_byte_at_a_time() -> None:
    body = msgspec.json.encode(TRICKY)
    assert split(body, list(range(len(body)))) == TRICKY


def test_empty_arrays_and_one_object() -> None:
    assert split(b"[]", [1]) == []
    assert split(b" [ \n ] ", [2, 4]) == []
    assert split(b'{"a": [1, 2], "b": "}"}', [3, 9]) == [{"a": [1, 2], "b": "}"}]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"not json",
        b"42",
        b'"text"',
        b'[{"a": 1}, {"a": 2}',
        b'[{"a": 1}] trailing',
        b'[{"a": 1}] [{"b": 2}]',
        b'[{"a": 1},]',
        b'[, {"a": 1}]',
        b'[{"a": 1} {"b": 2}]',
        b'[{"a": 1}, {"b": }]',
        b"[" + b'{"a": 1}, ' * 500 + b'{"a": x}, ' + b'{"a": 1}, ' * 500 + b"]",
    ],
)
def test_what_is_not_an_array_is_refused_however_it_is_cut(body: bytes) -> None:
    rng = random.Random(7)
    for n in (0, 1, 3, 30):
        with pytest.raises(BadArray):
            split(body, random_cuts(rng, body, n))


def test_nesting_past_the_recursion_limit_is_refused() -> None:
    # Whether deep nesting decodes depends on the recursion limit (mypy, run in-process, raises it to 16,384).
    body = b'[{"a": 1}, {"b": 2}, ' + b"[" * 5000 + b"]" * 5000 + b"]"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        for cuts in ([], [30], [30, 3000, 7000]):
            with pytest.raises(BadArray, match="nests too deeply"):
                split(body, cuts)
    finally:
        sys.setrecursionlimit(limit)


def test_an_element_is_never_held_past_the_bound() -> None:
    splitter = ArraySplitter(max_element=10_000)
    assert [bytes(e) for e in splitter.feed(b'[{"a": 1}, {"b": "')] == [b'{"a": 1}']
    with pytest.raises(ElementTooLarge):
        for _ in range(100):
            splitter.feed(b"x" * 1000)
    # One that ends within the chunk it began in is passed on (the row builder fails it for its size).
    got = ArraySplitter(max_element=100).feed(b'[{"a": "' + b"x" * 500 + b'"}, {"b": 1}')
    assert [len(e) for e in got] == [509, 8]


def test_whitespace_between_elements_is_not_held() -> None:
    splitter = ArraySplitter(max_element=1000)
    splitter.feed(b"[")
    for _ in range(1000):
        assert splitter.feed(b" " * 1000 + b"\n") == []
    assert [bytes(e) for e in splitter.feed(b'{"a": 1}  ' + b" " * 5000)] == [b'{"a": 1}']
    assert [bytes(e) for e in splitter.feed(b', {"b": 2}' + b"\n" * 5000 + b"]" + b" " * 5000)] == [b'{"b": 2}']
    assert splitter.finish() == []
    # Inside an element it is part of the element, and held.
    with pytest.raises(ElementTooLarge):
        ArraySplitter(max_element=1000).feed(b'[{"a":' + b" " * 2000)


def test_a_large_element_is_looked_at_a_few_times_not_once_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = arrays._RAW

    def counting(data: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(data)

    monkeypatch.setattr(arrays, "_RAW", counting)
    splitter = ArraySplitter(max_element=1 << 22)
    splitter.feed(b'[{"big": "')
    for _ in range(1000):  # 1 MB in 1 KB chunks
        assert splitter.feed(b"y" * 1024) == []
    assert calls < 20
    got = splitter.feed(b'", "n": 1}, {"n": 2}]') + splitter.finish()
    assert [msgspec.json.decode(e)["n"] for e in got] == [1, 2]


def test_msgspec_reports_where_a_value_ends() -> None:
    """arrays.py reads msgspec's "trailing characters (byte N)" to find where an element ends: pinned here."""
    with pytest.raises(msgspec.DecodeError, match=r"trailing characters \(byte 12\)$"):
        msgspec.json.decode(b'{"a": [1]} , {"b": 2}', type=msgspec.Raw)
    with pytest.raises(msgspec.DecodeError, match="truncated"):
        msgspec.json.decode(b'{"a": [1', type=msgspec.Raw)
    # Elements that are not objects, and `},{` inside strings, take that way: the result is the same.
    body = msgspec.json.encode([1, "x", [2], {"s": "},{"}, None] * 50)
    assert split(body, list(range(0, len(body), 97))) == [1, "x", [2], {"s": "},{"}, None] * 50


def test_only_json_whitespace_is_skipped() -> None:
    for pad in (b"\v", b"\f", b"\x00"):
        with pytest.raises(BadArray):
            split(b"[" + pad + b'{"a": 1}]', [1])
        with pytest.raises(BadArray):
            split(b'[{"a": 1}, ' + pad + b'{"a": 1}]', [10])

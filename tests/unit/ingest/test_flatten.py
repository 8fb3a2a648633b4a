"""Flattening to dot paths: nesting, dots in keys, arrays, null, empty objects, collisions, depth."""

from __future__ import annotations

import pytest

from app.ingest.flatten import MAX_DEPTH, TooDeep, flatten, has_nul
from app.ingest.rows import field_types


def test_nested_objects_become_dot_paths() -> None:
    event = {"http": {"status": 500, "req": {"method": "GET"}}, "msg": "x"}
    assert flatten(event) == {"http.status": 500, "http.req.method": "GET", "msg": "x"}
    assert event == {"http": {"status": 500, "req": {"method": "GET"}}, "msg": "x"}  # input left alone


def test_arrays_null_and_empty_objects_stay_values() -> None:
    event = {"tags": ["a", {"b": 1}], "gone": None, "empty": {}, "deep": {"none": None, "list": []}}
    assert flatten(event) == {
        "tags": ["a", {"b": 1}],
        "gone": None,
        "empty": {},
        "deep.none": None,
        "deep.list": [],
    }


def test_dots_in_keys_are_kept() -> None:
    assert flatten({"a.b": 1, "c": {"d.e": 2}}) == {"a.b": 1, "c.d.e": 2}


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"a.b": 1, "a": {"b": 2}}, {"a.b": 2}),  # the later key wins, like a repeated JSON key
        ({"a": {"b": 2}, "a.b": 1}, {"a.b": 1}),
        ({"a": {"b.c": 1, "b": {"c": 2}}}, {"a.b.c": 2}),
    ],
)
def test_key_collisions_later_wins(event: dict[str, object], expected: dict[str, object]) -> None:
    assert flatten(event) == expected


def test_deep_nesting() -> None:
    event: dict[str, object] = {"leaf": 1}
    for i in range(200):
        event = {f"k{i}": event}
    flat = flatten(event)
    (path,) = flat
    assert path.count(".") == 200 and path.startswith("k199.k198.") and path.endswith(".k0.leaf")
    too_deep: dict[str, object] = {"leaf": 1}
    for _ in range(MAX_DEPTH + 2):
        too_deep = {"k": too_deep}
    with pytest.raises(TooDeep):
        flatten(too_deep)


def test_field_types_are_json_types() -> None:
    flat = {"s": "x", "i": 1, "f": 1.5, "b": True, "n": None, "a": [1], "o": {}}
    shape = (tuple(flat), tuple(map(type, flat.values())))
    assert field_types([shape]) == {
        "s": {"string"},
        "i": {"number"},
        "f": {"number"},
        "b": {"boolean"},
        "n": {"null"},
        "a": {"array"},
        "o": {"object"},
    }


def test_has_nul_looks_everywhere() -> None:
    assert has_nul({"a": ["x", {"b": "y\x00"}]})
    assert has_nul({"k\x00": 1})
    assert not has_nul({"a": "\\u0000 is only text here"})

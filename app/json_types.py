"""JSON bodies take JSON's own types: `true` or `false` for a boolean, a number for a number.

Litestar converts a body into its handler's type leniently (msgspec's `strict=False`): `"continue": 0` was read
as false, `"interval_seconds": "60"` as 60, where the OpenAPI document (and every client generated from it) says
boolean and integer, so the server took what its document calls invalid (schemathesis found it). `wrong_type`
walks the decoded body beside the handler's type and names the first boolean or number given as another JSON
type; app/inputs.py refuses it (400 `invalid_field`) before Litestar converts. What JSON Schema also allows stays
allowed: `3.0` is an integer, and a request datetime may be unix seconds (the document says so).

Only the parts of a type that hold a boolean or a number are walked: most bodies (alerts, annotations) have
none but datetimes, and cost nothing here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec.inspect as mi

_NUMBERS = (mi.IntType, mi.FloatType)
_SEQUENCES = (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)
_RECORDS = (mi.StructType, mi.DataclassType, mi.TypedDictType)


@cache
def info(annotation: Any) -> mi.Type | None:
    try:
        return mi.type_info(annotation)
    except (TypeError, ValueError):  # a type msgspec cannot describe: Litestar's conversion alone judges it
        return None


def _holds_typed(t: mi.Type, seen: set[int]) -> bool:
    """Whether `t` holds a boolean or a number anywhere (`seen`: the records on the way, for recursive types)."""
    if isinstance(t, (mi.BoolType, *_NUMBERS)):
        return True
    if isinstance(t, mi.Metadata):
        return _holds_typed(t.type, seen)
    if isinstance(t, mi.UnionType):
        return any(_holds_typed(m, seen) for m in t.types)
    if isinstance(t, _SEQUENCES):
        return _holds_typed(t.item_type, seen)
    if isinstance(t, mi.DictType):
        return _holds_typed(t.value_type, seen)
    if isinstance(t, _RECORDS):
        if id(t) in seen:
            return False
        seen.add(id(t))
        return any(_holds_typed(f.type, seen) for f in t.fields)
    return False


_HOLDS: dict[int, bool] = {}


def holds_typed(t: mi.Type) -> bool:
    found = _HOLDS.get(id(t))
    if found is None:
        found = _HOLDS[id(t)] = _holds_typed(t, set())
    return found


def _admits(value: Any, t: mi.Type) -> bool:
    """Whether a union's member that holds no boolean or number could take `value` (its JSON type, loosely)."""
    if isinstance(t, mi.Metadata):
        return _admits(value, t.type)
    if isinstance(t, mi.NoneType):
        return value is None
    if isinstance(t, mi.StrType | mi.EnumType | mi.LiteralType):
        return isinstance(value, str) or (isinstance(t, mi.LiteralType | mi.EnumType) and not isinstance(value, bool))
    if isinstance(t, mi.DateTimeType | mi.DateType | mi.TimeType | mi.TimeDeltaType | mi.UUIDType | mi.DecimalType):
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    if isinstance(t, _SEQUENCES):
        return isinstance(value, list)
    if isinstance(t, _RECORDS | mi.DictType):
        return isinstance(value, dict)
    return True  # Any, and types msgspec leaves to their own decoders


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else ("an array" if isinstance(value, list) else "an object")


def wrong_type(value: Any, t: mi.Type, path: str = "") -> tuple[str, str] | None:
    """(dotted path, message) of the first boolean or number that `value` gives as another JSON type; None when
    there is none. Other mistakes (a missing field, an array for an object) are left to Litestar's conversion."""
    if isinstance(t, mi.Metadata):
        return wrong_type(value, t.type, path)
    if isinstance(t, mi.BoolType):
        return None if isinstance(value, bool) else (path, f"must be true or false, not {_json_type(value)}")
    if isinstance(t, _NUMBERS):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else (path, f"must be a number, not {_json_type(value)}")
    if not holds_typed(t):
        return None
    if isinstance(t, mi.UnionType):
        typed = [m for m in t.types if holds_typed(m)]
        if any(_admits(value, m) for m in t.types if m not in typed):
            return None
        found = [wrong_type(value, m, path) for m in typed]
        return None if any(f is None for f in found) else next(f for f in found if f is not None)
    if isinstance(t, _SEQUENCES) and isinstance(value, list):
        return next((w for item in value if (w := wrong_type(item, t.item_type, path)) is not None), None)
    if isinstance(t, mi.DictType) and isinstance(value, dict):
        for key, item in value.items():
            found_in = wrong_type(item, t.value_type, f"{path}.{key}" if path else str(key))
            if found_in is not None:
                return found_in
        return None
    if isinstance(t, _RECORDS) and isinstance(value, dict):
        for field in t.fields:
            name = getattr(field, "encode_name", field.name)
            if name in value:
                found_in = wrong_type(value[name], field.type, f"{path}.{name}" if path else name)
                if found_in is not None:
                    return found_in
        return None
    # Another JSON type where this type wants an array or an object: Litestar's conversion refuses it alone.
    return None

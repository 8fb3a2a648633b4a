"""A fast path for NDJSON streams that repeat one event shape: msgspec Structs made for that shape.

Most streams send the same fields event after event. From one event the general path has decoded,
`plan_for` builds a Struct type for exactly its shape (every field required, unknown fields refused, each
nested object a nested Struct, every other value typed as it was) and a flat Struct whose field names are
the dot paths. The next lines then decode straight into the first, with no dict and no key strings built;
one `attrgetter` over dotted attribute paths lifts out all the flat values in one C call; and the flat
Struct encodes them with its keys already encoded. The shape's value types are known, too, so field
discovery has nothing to look at. Measured on bench/ingest.py's events: the row builder takes 3.1 µs per
event instead of 5.1.

A line of any other shape (a missing or extra field, a value of another JSON type) fails to decode into the
plan, and the caller reads it the general way, so what is stored is always exactly what the general path
would store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import msgspec

# Shapes beyond these are not worth a plan (and are rare): the general path handles them.
MAX_FIELDS = 200
MAX_DEPTH = 8


@dataclass(frozen=True, slots=True)
class ShapePlan:
    decode: Callable[[bytes], Any]  # raises msgspec.DecodeError for a line of another shape
    time: Callable[[Any], Any] | None  # the timestamp field's value; None when the shape has none
    values: Callable[[Any], tuple[Any, ...]]  # the flat values, in the order of `keys`
    flat: Callable[..., Any]  # the flat Struct type: flat(*values) encodes as the flattened event
    keys: tuple[str, ...]  # the flat field names, the timestamp field left out
    types: tuple[type, ...]  # their value types, as field discovery records them


# A leaf's JSON type is part of the shape, so the decoder checks it: a value of another type fails the line
# over to the general path, and every line the plan reads has the same field types. Numbers take int | float,
# which decodes each as the general path does (1 stays 1, 1.0 stays 1.0); both are "number" to field
# discovery. An empty object as a value has no Struct type that accepts only `{}`: no plan.
_LEAF_TYPES: dict[type, Any] = {
    str: str,
    bool: bool,
    int: int | float,
    float: int | float,
    type(None): None,
    list: list,
}


class _NoPlan(Exception):
    pass


def plan_for(event: dict[str, Any], time_field: str) -> ShapePlan | None:
    """A plan for events shaped like `event` (as decoded, before anything was taken out), or None."""
    leaves: list[tuple[str, str, type]] = []  # (dot path, attribute path, value type)
    try:
        root = _struct(event, "", "", leaves, 0, time_field)
    except _NoPlan:
        return None
    names = [name for name, _, _ in leaves]
    if len(set(names)) != len(names):
        return None  # two keys flatten to one path: the general path decides which wins
    # The general path takes the timestamp from the top level first, else from the flattened event; both
    # are one of the leaves here (a top-level key named like the field is always a leaf, see `_struct`).
    time_attr = next((attr for name, attr, _ in leaves if name == time_field), None)
    rest = [leaf for leaf in leaves if leaf[0] != time_field]
    if len(rest) < 2:
        return None  # attrgetter of one path returns the value, not a tuple; such events are cheap anyway
    try:
        flat = _define("Flat", [(name, Any) for name, _, _ in rest], forbid_unknown=False)
    except (TypeError, ValueError):
        return None
    return ShapePlan(
        decode=msgspec.json.Decoder(root).decode,
        time=attrgetter(time_attr) if time_attr else None,
        values=attrgetter(*(attr for _, attr, _ in rest)),
        flat=flat,
        keys=tuple(name for name, _, _ in rest),
        types=tuple(kind for _, _, kind in rest),
    )


def _struct(
    obj: dict[str, Any],
    prefix: str,
    attr_prefix: str,
    leaves: list[tuple[str, str, type]],
    depth: int,
    time_field: str,
) -> Any:
    if depth > MAX_DEPTH:
        raise _NoPlan
    fields: list[tuple[str, Any]] = []
    for i, (key, value) in enumerate(obj.items()):
        attr = f"{attr_prefix}f{i}"
        kind = type(value)
        if depth == 0 and key == time_field:  # taken out before flattening, whatever it holds
            leaves.append((key, attr, kind))
            fields.append((key, Any))
        elif kind is dict and value:
            fields.append((key, _struct(value, prefix + key + ".", attr + ".", leaves, depth + 1, time_field)))
        elif kind in _LEAF_TYPES:
            leaves.append((prefix + key, attr, kind))
            fields.append((key, _LEAF_TYPES[kind]))
        else:
            raise _NoPlan
        if len(leaves) > MAX_FIELDS:
            raise _NoPlan
    try:
        return _define("Shape", fields, forbid_unknown=True)
    except (TypeError, ValueError):
        raise _NoPlan from None


def _define(name: str, fields: list[tuple[str, Any]], *, forbid_unknown: bool) -> Any:
    # Attributes are f0, f1, ...; the JSON names are renames, which msgspec refuses (ValueError) when they hold
    # a quote, a backslash or a control character such as U+0000: such shapes get no plan. gc=False: decoded
    # JSON holds no reference cycles, and untracked Structs are cheaper to make.
    return msgspec.defstruct(
        name,
        [(f"f{i}", kind) for i, (_, kind) in enumerate(fields)],
        rename={f"f{i}": key for i, (key, _) in enumerate(fields)},
        forbid_unknown_fields=forbid_unknown,
        gc=False,
    )

"""Field discovery: each dataset's field names and the JSON types seen, without a round trip per event.

The hot loop only collects event shapes (names + value types) into a set. Per request, shapes this process
has already recorded for the dataset are skipped; the fields of the rest are upserted in the request's own
transaction (so a failed request records nothing), sorted by name so concurrent upserts lock rows in one
order. The cache is updated only after commit, so it never claims more than the database holds.
"""

from __future__ import annotations

from collections.abc import Iterable

import asyncpg

from app.ingest.rows import Shape, field_types

# Past this many remembered shapes for one dataset the cache starts again: it only saves work, and a
# dataset whose events all differ in shape would otherwise grow it without end.
MAX_SHAPES_PER_DATASET = 20_000

_UPSERT = """
INSERT INTO dataset_fields AS f (dataset_id, name, types)
SELECT $1, u.name, string_to_array(u.types, ',')
FROM unnest($2::text[], $3::text[]) AS u(name, types)
ORDER BY u.name
ON CONFLICT (dataset_id, name) DO UPDATE
SET types = ARRAY(SELECT DISTINCT t FROM unnest(f.types || excluded.types) AS t ORDER BY t)
WHERE NOT f.types @> excluded.types
"""


class FieldCache:
    def __init__(self) -> None:
        self._shapes: dict[int, set[Shape]] = {}
        self._fields: dict[int, dict[str, set[str]]] = {}

    def new_shapes(self, dataset_id: int, shapes: set[Shape]) -> set[Shape]:
        known = self._shapes.get(dataset_id)
        return shapes - known if known else set(shapes)

    def unknown_fields(self, dataset_id: int, shapes: Iterable[Shape]) -> dict[str, set[str]]:
        known = self._fields.get(dataset_id, {})
        return {name: types for name, types in field_types(shapes).items() if not types <= known.get(name, set())}

    def remember(self, dataset_id: int, shapes: set[Shape], fields: dict[str, set[str]]) -> None:
        known_shapes = self._shapes.setdefault(dataset_id, set())
        if len(known_shapes) + len(shapes) > MAX_SHAPES_PER_DATASET:
            known_shapes.clear()
        known_shapes |= shapes
        known_fields = self._fields.setdefault(dataset_id, {})
        for name, types in fields.items():
            known_fields.setdefault(name, set()).update(types)

    def forget_dataset(self, dataset_id: int) -> None:
        self._shapes.pop(dataset_id, None)
        self._fields.pop(dataset_id, None)


async def record_fields(conn: asyncpg.Connection, dataset_id: int, fields: dict[str, set[str]]) -> None:
    if not fields:
        return
    names = sorted(fields)
    await conn.execute(_UPSERT, dataset_id, names, [",".join(sorted(fields[n])) for n in names])

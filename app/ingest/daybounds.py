"""A dataset's first and last day with events (`datasets.first_day` / `last_day`), widened by ingest.

Queries clamp their range to these days (app/query/service.py), so they must cover every stored event: the
widening is written in the ingest transaction itself, and retention never narrows them. Live data moves
`last_day` once a day, so the row is updated about once a day per dataset: the days this process knows
to be recorded are cached (after commit only), and a request within them writes nothing more.
"""

from __future__ import annotations

from collections.abc import Collection

import asyncpg

from app.ingest.partitions import day_date, day_number

_WIDEN = """
UPDATE datasets SET first_day = LEAST(first_day, $2::date), last_day = GREATEST(last_day, $3::date)
WHERE id = $1 RETURNING first_day, last_day
"""


class DayBounds:
    def __init__(self) -> None:
        self._known: dict[int, tuple[int, int]] = {}  # dataset id -> (first, last) day, as committed

    async def widen(self, conn: asyncpg.Connection, dataset_id: int, days: Collection[int]) -> tuple[int, int] | None:
        """Widen the dataset's recorded days to cover `days`, in the caller's transaction; the new bounds to
        `remember` once it commits, or None when nothing had to be written."""
        if not days:
            return None
        low, high = min(days), max(days)
        known = self._known.get(dataset_id)
        if known is not None and known[0] <= low and high <= known[1]:
            return None
        row = await conn.fetchrow(_WIDEN, dataset_id, day_date(low), day_date(high))
        return None if row is None else (day_number(row[0]), day_number(row[1]))

    def remember(self, dataset_id: int, bounds: tuple[int, int] | None) -> None:
        if bounds is not None:
            self._known[dataset_id] = bounds

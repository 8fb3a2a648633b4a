"""Datasets: list, detail with stats, fields, update, delete (the events go with it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import msgspec
from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import dataset_filter, list_scope, require_dataset
from app.auth import Principal
from app.datasets import holds
from app.datasets.names import check_dataset_name
from app.datasets.schemas import DatasetDetail, DatasetOut, DatasetPatch, FieldOut
from app.db.advisory import Space, lock
from app.db.dataset import Dataset, DatasetField
from app.db.engine import driver_connection
from app.errors import not_found
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.timefmt import iso_ms, iso_ms_or_none

# Up to this many events a dataset's count is exact; past it the planner's estimate is used, so the detail
# endpoint stays fast for datasets of any size.
EXACT_COUNT_LIMIT = 100_000


def to_out(ds: Dataset) -> DatasetOut:
    return DatasetOut(
        name=ds.name,
        created_at=iso_ms(ds.created_at),
        description=ds.description,
        retention_days=ds.retention_days,
    )


def field_out(f: DatasetField) -> FieldOut:
    return FieldOut(name=f.name, types=list(f.types), first_seen=iso_ms(f.first_seen))


async def get_dataset(
    session: AsyncSession, name: str, who: Principal, *, hold: Literal["shared", "exclusive"] | None = None
) -> Dataset:
    """The dataset by name (400 for a bad name, 403 outside the token's datasets, 404 when absent).

    hold="exclusive" (delete) waits for the ingests in flight, which hold it shared, and keeps new ones out until
    this transaction ends; hold="shared" (patch) does not (app/datasets/holds.py). Either way the row is read
    once the dataset is held.
    """
    check_dataset_name(name)
    require_dataset(who, name)
    for _ in range(holds.ATTEMPTS):
        found = (await session.execute(select(Dataset).where(Dataset.name == name))).scalar_one_or_none()
        if found is None or hold is None:
            break
        await lock(session, Space.DATASET, found.id, shared=hold == "shared")
        again = select(Dataset).where(Dataset.id == found.id).execution_options(populate_existing=True)
        if (await session.execute(again)).scalar_one_or_none() is not None:
            return found
        found = None  # deleted meanwhile; its name may have been given to a new dataset: look again
    if found is None:
        raise not_found("dataset", name, by="name")
    return found


async def list_datasets(
    session: AsyncSession, codec: CursorCodec, who: Principal, *, limit: int | None, cursor: str | None
) -> ListEnvelope[DatasetOut]:
    scope = list_scope(who, "datasets")  # a token limited to datasets sees only those
    return await paginate(
        session,
        select(Dataset).where(dataset_filter(who, Dataset.name)),
        codec=codec,
        scope=scope,
        keys=(Dataset.created_at, Dataset.id),
        render=to_out,
        limit=limit,
        cursor=cursor,
    )


async def _events_estimate(session: AsyncSession, dataset_id: int) -> int:
    exact = (
        await session.execute(
            text("SELECT count(*) FROM (SELECT 1 FROM events WHERE dataset_id = :id LIMIT :cap) s"),
            {"id": dataset_id, "cap": EXACT_COUNT_LIMIT},
        )
    ).scalar_one()
    if exact < EXACT_COUNT_LIMIT:
        return int(exact)
    return await _planned_rows(session, dataset_id, int(exact))


async def _planned_rows(session: AsyncSession, dataset_id: int, exact: int) -> int:
    plan = (
        await session.execute(
            text("EXPLAIN (FORMAT JSON) SELECT 1 FROM events WHERE dataset_id = :id"), {"id": dataset_id}
        )
    ).scalar_one()
    return max(int(exact), planned_rows(plan[0]["Plan"]))


def planned_rows(node: Any) -> int:
    """The largest row estimate anywhere in a plan: on PostgreSQL its top node's (an Append over the partitions),
    on Citus that of the plan the shard runs, which Citus nests under its own node (whose estimate is 0)."""
    if isinstance(node, dict):
        own = int(node["Plan Rows"]) if isinstance(node.get("Plan Rows"), (int, float)) else 0
        return max([own, *(planned_rows(v) for v in node.values() if isinstance(v, (dict, list)))])
    if isinstance(node, list):
        return max([0, *(planned_rows(v) for v in node)])
    return 0


@dataclass(frozen=True)
class Activity:
    """How busy a dataset is, for the console's list: cheap enough for a page of 100 datasets."""

    events: int  # exact up to LIST_EXACT_MINUTES minutes with events, else the planner's estimate
    exact: bool
    last_event: datetime | None  # the latest `_time`
    last_hour: int  # events timed in the last 60 minutes (the current one included)


# A list shows many datasets at once: events are counted from the per-minute rollup (`event_rollups`, which always
# equals the events: app/ingest/rollups.py), so a count costs the minutes a dataset has events in, not its events.
# Exact up to this many minutes (two weeks of a steady feed), then the planner's estimate.
LIST_EXACT_MINUTES = 20_000
_IDS = text("SELECT name, id FROM datasets WHERE name = ANY(CAST(:names AS text[]))")
# One statement per dataset, by its id (on Citus each goes to the dataset's shard), all sent in one round trip.
_ACTIVITY = """
SELECT (SELECT max(time) FROM events WHERE dataset_id = $1) AS last_event, c.minutes, c.events,
       (SELECT coalesce(sum(count), 0) FROM event_rollups
         WHERE dataset_id = $1 AND minute > $2 AND minute <= $3) AS last_hour
FROM (SELECT count(*) AS minutes, coalesce(sum(s.count), 0) AS events
      FROM (SELECT count FROM event_rollups WHERE dataset_id = $1 LIMIT $4) s) c
"""


async def activity(session: AsyncSession, names: Sequence[str], now: datetime) -> dict[str, Activity]:
    ids = [(name, int(i)) for name, i in (await session.execute(_IDS, {"names": list(names)})).all()]
    if not ids:
        return {}
    conn = await driver_connection(session)
    hour_ago = now - timedelta(hours=1)
    rows = await conn.fetchmany(_ACTIVITY, [(i, hour_ago, now, LIST_EXACT_MINUTES) for _, i in ids])
    found = {}
    for (name, dataset_id), (last_event, minutes, events, last_hour) in zip(ids, rows, strict=True):
        exact = int(minutes) < LIST_EXACT_MINUTES
        count = int(events) if exact else await _planned_rows(session, dataset_id, int(events))
        found[name] = Activity(count, exact, last_event, int(last_hour))
    return found


async def dataset_detail(session: AsyncSession, ds: Dataset) -> DatasetDetail:
    fields_count = (
        await session.execute(select(func.count()).select_from(DatasetField).where(DatasetField.dataset_id == ds.id))
    ).scalar_one()
    bounds = (
        await session.execute(text("SELECT min(time), max(time) FROM events WHERE dataset_id = :id"), {"id": ds.id})
    ).one()
    base = to_out(ds)
    return DatasetDetail(
        name=base.name,
        created_at=base.created_at,
        description=base.description,
        retention_days=base.retention_days,
        fields_count=int(fields_count),
        events_estimate=await _events_estimate(session, ds.id),
        min_time=iso_ms_or_none(bounds[0]),
        max_time=iso_ms_or_none(bounds[1]),
    )


async def list_fields(
    session: AsyncSession, codec: CursorCodec, ds: Dataset, *, limit: int | None, cursor: str | None
) -> ListEnvelope[FieldOut]:
    return await paginate(
        session,
        select(DatasetField).where(DatasetField.dataset_id == ds.id),
        codec=codec,
        scope=f"fields:{ds.id}",
        keys=(DatasetField.first_seen, DatasetField.name),
        render=field_out,
        limit=limit,
        cursor=cursor,
    )


async def update_dataset(session: AsyncSession, ds: Dataset, patch: DatasetPatch) -> DatasetDetail:
    if patch.description is not msgspec.UNSET:
        ds.description = patch.description
    if patch.retention_days is not msgspec.UNSET:
        ds.retention_days = patch.retention_days
    await session.commit()
    return await dataset_detail(session, ds)


async def delete_dataset(session: AsyncSession, ds: Dataset) -> None:
    """Delete a dataset, its fields, its events and their per-minute counts in one transaction.

    `ds` is held exclusively (get_dataset), which waited for ingests in flight (they hold it shared) and keeps
    new ones out until this commits. Its fields go by its id too, not by the foreign key's cascade from the
    `datasets` row: on Citus that is one shard's delete, not a cascade from a reference table to every shard.
    """
    for table in ("events", "event_rollups", "dataset_fields"):
        await session.execute(text(f"DELETE FROM {table} WHERE dataset_id = :id"), {"id": ds.id})
    await session.execute(delete(Dataset).where(Dataset.id == ds.id))
    await session.commit()

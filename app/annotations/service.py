"""Creating, listing, changing and deleting annotations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec
from msgspec import UNSET
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.checks import http_url_problem
from app.access import annotation_filter, require_datasets
from app.annotations.schemas import AnnotationCreate, AnnotationOut, AnnotationUpdate
from app.auth import Principal
from app.datasets.names import check_dataset_name, is_dataset_name
from app.db.annotation import Annotation
from app.errors import BeaconError, not_found
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.request_ids import new_id
from app.timefmt import iso_ms, iso_ms_or_none, utcnow
from app.timeparams import to_ms


def to_out(a: Annotation) -> AnnotationOut:
    return AnnotationOut(
        id=a.id,
        type=a.type,
        title=a.title,
        description=a.description,
        datasets=list(a.datasets),
        time=iso_ms(a.time),
        end_time=iso_ms_or_none(a.end_time),
        url=a.url,
        created_at=iso_ms(a.created_at),
    )


def _datasets(names: Sequence[str], param: str = "datasets") -> list[str]:
    for name in names:
        check_dataset_name(name, param=param)
    return list(dict.fromkeys(names))  # duplicates dropped, order kept


def _check_url(url: str | None) -> None:
    problem = None if url is None else http_url_problem(url)
    if problem:
        raise BeaconError("invalid_field", f"`url` {problem}.", param="url")


def _check_span(time: datetime, end_time: datetime | None) -> None:
    if end_time is not None and end_time < time:
        raise BeaconError("invalid_field", "`end_time` must not be before `time`.", param="end_time")


async def create_annotation(session: AsyncSession, who: Principal, data: AnnotationCreate) -> AnnotationOut:
    now = utcnow()
    time = to_ms(data.time) if data.time is not None else to_ms(now)
    end_time = to_ms(data.end_time) if data.end_time is not None else None
    datasets = _datasets(data.datasets)
    require_datasets(who, datasets)
    _check_span(time, end_time)
    _check_url(data.url)
    annotation = Annotation(
        id=new_id("ann_"),
        type=data.type,
        title=data.title,
        description=data.description,
        datasets=datasets,
        time=time,
        end_time=end_time,
        url=data.url,
        created_at=now,
    )
    session.add(annotation)
    await session.commit()
    return to_out(annotation)


def add_annotation(
    session: AsyncSession,
    *,
    type_: str,
    title: str,
    datasets: Sequence[str],
    time: datetime,
    description: str | None = None,
    url: str | None = None,
) -> Annotation:
    """Add an annotation to the session without committing: a monitor's state change writes its annotation in
    the same transaction as the change. The caller has checked the fields (titles are cut to the limit)."""
    annotation = Annotation(
        id=new_id("ann_"),
        type=type_,
        title=title[:256],
        description=description[:2048] if description else None,
        datasets=_datasets(datasets),
        time=to_ms(time),
        end_time=None,
        url=url,
        created_at=utcnow(),
    )
    session.add(annotation)
    return annotation


async def get_annotation(session: AsyncSession, who: Principal, annotation_id: str) -> Annotation:
    """The annotation, if all its datasets are `who`'s (app/access.py); otherwise a 404, as an unknown id."""
    stmt = select(Annotation).where(Annotation.id == annotation_id, annotation_filter(who))
    annotation = (await session.execute(stmt)).scalar()
    if annotation is None:
        raise not_found("annotation", annotation_id)
    return annotation


async def update_annotation(
    session: AsyncSession, who: Principal, annotation_id: str, data: AnnotationUpdate
) -> AnnotationOut:
    annotation = await get_annotation(session, who, annotation_id)
    changes = {
        name: value
        for name in ("type", "title", "datasets", "time", "end_time", "url", "description")
        if (value := getattr(data, name)) is not UNSET
    }
    if "datasets" in changes:
        changes["datasets"] = _datasets(changes["datasets"])
        require_datasets(who, changes["datasets"])
    for name in ("time", "end_time"):
        if changes.get(name) is not None:
            changes[name] = to_ms(changes[name])
    if "url" in changes:
        _check_url(changes["url"])
    _check_span(changes.get("time", annotation.time), changes.get("end_time", annotation.end_time))
    for name, value in changes.items():
        setattr(annotation, name, value)
    await session.commit()
    return to_out(annotation)


async def delete_annotation(session: AsyncSession, who: Principal, annotation_id: str) -> None:
    annotation = await get_annotation(session, who, annotation_id)
    await session.delete(annotation)
    await session.commit()


async def list_annotations(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    *,
    datasets: Sequence[str] | None,
    start_time: datetime | None,
    end_time: datetime | None,
    type_: str | None,
    limit: int | None,
    cursor: str | None,
    range_as_given: tuple[str | None, str | None] | None = None,
) -> ListEnvelope[AnnotationOut]:
    """`range_as_given`: the query string's `start_time` and `end_time` as sent, which the cursor keeps: `now-3h` is
    another instant on each page, and its next page must still be the same list's."""
    if start_time is not None and end_time is not None and end_time < start_time:
        raise BeaconError("invalid_parameter", "`end_time` must not be before `start_time`.", param="end_time")
    stmt = select(Annotation).where(annotation_filter(who))
    names = _dataset_filter(datasets)
    if names:
        stmt = stmt.where(Annotation.datasets.overlap(names))
    # A point or span overlaps the range when it starts before the range ends and ends after it starts.
    if end_time is not None:
        stmt = stmt.where(Annotation.time <= end_time)
    if start_time is not None:
        stmt = stmt.where(func.coalesce(Annotation.end_time, Annotation.time) >= start_time)
    if type_ is not None:
        stmt = stmt.where(Annotation.type == type_)
    # The cursor only fits this list with these filters.
    bounds = range_as_given or (_iso(start_time), _iso(end_time))
    scope = "annotations:" + msgspec.json.encode([sorted(names or []), *bounds, type_]).decode()
    return await paginate(
        session,
        stmt,
        codec=codec,
        scope=scope,
        keys=(Annotation.time, Annotation.id),
        render=to_out,
        limit=limit,
        cursor=cursor,
    )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dataset_filter(values: Sequence[str] | None) -> list[str] | None:
    """`datasets=a,b` (or repeated `datasets=`): annotations on any of them."""
    names = [n.strip() for v in values or () for n in v.split(",") if n.strip()]
    for name in names:
        if not is_dataset_name(name):
            raise BeaconError("invalid_parameter", f"Invalid dataset name {name!r} in `datasets`.", param="datasets")
    return names or None

"""Creating, listing, changing and deleting annotations.

`add`, `change` and `remove` are what every API that writes annotations calls (`/v1/annotations`, and the deploy
tools' Grafana, Honeycomb and PagerDuty endpoints, app/deploymarkers/): they check the fields and what the token
may touch (app/access.py), keep a rollout's silence with its span (app/annotations/rollouts.py), and leave the
commit to the caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType
from sqlalchemy import Select, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.checks import http_url_problem
from app.access import annotation_filter, require_annotation_write, unlimited
from app.annotations import rollouts
from app.annotations.schemas import AnnotationCreate, AnnotationOut, AnnotationUpdate
from app.auth import Principal
from app.datasets.names import check_dataset_name, is_dataset_name
from app.db.annotation import ENVIRONMENT_WIDE, Annotation
from app.errors import BeaconError, not_found
from app.pagination import CursorCodec, ListEnvelope, check_limit, paginate
from app.request_ids import new_id
from app.routing.labels import check_labels
from app.routing.matchers import Matcher
from app.schemas import TIME_RANGE, in_time_range
from app.timefmt import iso_ms, iso_ms_or_none, utcnow
from app.timeparams import to_ms

TYPE_CHARS = TITLE_CHARS = 256
DESCRIPTION_CHARS = 2048
URL_CHARS = 2048
SCAN_BATCH = 500  # rows read per step when a list's label matchers cannot all be said in SQL


def to_out(a: Annotation) -> AnnotationOut:
    return AnnotationOut(
        id=a.id,
        type=a.type,
        title=a.title,
        description=a.description,
        datasets=list(a.datasets) or [ENVIRONMENT_WIDE],
        time=iso_ms(a.time),
        end_time=iso_ms_or_none(a.end_time),
        url=a.url,
        created_at=iso_ms(a.created_at),
        labels=dict(sorted((a.labels or {}).items())),
        origin=a.origin,
        silence_id=a.silence_id,
    )


def datasets_of(names: Sequence[str], param: str = "datasets") -> list[str]:
    """Checked dataset names, duplicates dropped (order kept); `["*"]` alone is environment-wide (`[]`)."""
    if ENVIRONMENT_WIDE in names:
        if len(names) != 1:
            raise BeaconError(
                "invalid_field",
                f'`"{ENVIRONMENT_WIDE}"` (environment-wide: every chart) must be the only entry of `{param}`.',
                param=param,
            )
        return []
    for name in names:
        check_dataset_name(name, param=param)
    return list(dict.fromkeys(names))


def labels_of(labels: Mapping[str, Any], param: str = "labels") -> dict[str, str]:
    """Label rules of alerts (names, at most 64, values up to 1,024 characters); an empty value is refused: on an
    alert it is an absent label, so it could never match."""
    checked = check_labels(labels, param)
    for name, value in checked.items():
        if value == "":
            raise BeaconError(
                "invalid_field", f"Label `{name}` is empty: leave an absent label out.", param=f"{param}.{name}"
            )
    return dict(sorted(checked.items()))


def _check_url(url: str | None) -> None:
    if url is None:
        return
    problem = "is longer than 2,048 characters" if len(url) > URL_CHARS else http_url_problem(url)
    if problem:
        raise BeaconError("invalid_field", f"`url` {problem}.", param="url")


def _check_text(name: str, value: str | None, limit: int, *, required: bool = False) -> None:
    if value is None or (value == "" and not required):
        return
    if value == "" or len(value) > limit:
        raise BeaconError("invalid_field", f"`{name}` must be 1 to {limit} characters.", param=name)


def _check_time(name: str, value: datetime | None) -> None:
    if value is not None and not in_time_range(value):
        raise BeaconError("invalid_field", f"`{name}` must lie {TIME_RANGE}.", param=name)


def _check_span(time: datetime, end_time: datetime | None) -> None:
    if end_time is not None and end_time < time:
        raise BeaconError("invalid_field", "`end_time` must not be before `time`.", param="end_time")


@dataclass
class Draft:
    """A new annotation, as any of the APIs that write them describes it. `datasets` are checked names (`[]`:
    environment-wide, `datasets_of`); `silence`: the matchers of a silence to hold over the span."""

    type: str
    title: str
    datasets: list[str]
    time: datetime | None = None  # now when absent
    end_time: datetime | None = None
    url: str | None = None
    description: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    origin: str = "api"
    source_fields: dict[str, Any] = field(default_factory=dict)
    silence: list[str] | None = None


def add(session: AsyncSession, who: Principal, draft: Draft, now: datetime) -> Annotation:
    """Check `draft` and what `who` may write, and add it to the session (the caller commits)."""
    require_annotation_write(who, draft.datasets)
    matchers = _silence_matchers(who, draft.silence)
    _check_text("type", draft.type, TYPE_CHARS, required=True)
    _check_text("title", draft.title, TITLE_CHARS, required=True)
    _check_text("description", draft.description, DESCRIPTION_CHARS)
    time = to_ms(draft.time) if draft.time is not None else to_ms(now)
    end_time = to_ms(draft.end_time) if draft.end_time is not None else None
    _check_time("time", time)
    _check_time("end_time", end_time)
    _check_span(time, end_time)
    _check_url(draft.url)
    annotation = Annotation(
        id=new_id("ann_"),
        type=draft.type,
        title=draft.title,
        description=draft.description or None,
        datasets=draft.datasets,
        time=time,
        end_time=end_time,
        url=draft.url,
        created_at=now,
        updated_at=now,
        labels=draft.labels,
        origin=draft.origin,
        confined=not unlimited(who),
        source_fields=draft.source_fields,
        silence_id=None,
    )
    session.add(annotation)
    if matchers is not None:
        rollouts.hold(session, annotation, matchers, now)
    return annotation


def _silence_matchers(who: Principal, texts: list[str] | None) -> list[Matcher] | None:
    if texts is None:
        return None
    rollouts.require_silence_rights(who)
    return rollouts.check_matchers(texts)


CHANGEABLE = ("type", "title", "datasets", "time", "end_time", "url", "description", "labels", "source_fields")
# A deploy tool's fields kept as sent (read back through its API), and the fields they are the source of.
MIRRORED = {"text": {"title", "description"}, "message": {"title", "description"}, "tags": {"type", "labels"}}


async def change(
    session: AsyncSession,
    who: Principal,
    annotation: Annotation,
    changes: Mapping[str, Any],
    now: datetime,
    *,
    silence: list[str] | UnsetType | None = UNSET,
) -> Annotation:
    """Apply `changes` (fields of CHANGEABLE, checked here: `datasets` as `datasets_of` gives them, `labels` as
    `labels_of`) and keep the held silence with the span; `silence`: new matchers, or None to end it now. The
    caller commits."""
    require_annotation_write(who, annotation.datasets)
    if "datasets" in changes:
        require_annotation_write(who, changes["datasets"])
    spanned = {"time", "end_time"} & set(changes)
    held = await rollouts.held(session, annotation)
    if held is not None and (spanned or silence is not UNSET):
        rollouts.require_silence_rights(who)  # moving or ending a silence is a silence's change
    matchers = _silence_matchers(who, silence) if isinstance(silence, list) else None
    for name in ("type", "title"):
        if name in changes:
            _check_text(name, changes[name], TYPE_CHARS, required=True)
    if "description" in changes:
        _check_text("description", changes["description"], DESCRIPTION_CHARS)
    updated = dict(changes)
    for name in ("time", "end_time"):
        if updated.get(name) is not None:
            updated[name] = to_ms(updated[name])
            _check_time(name, updated[name])
    if "url" in updated:
        _check_url(updated["url"])
    _check_span(updated.get("time", annotation.time), updated.get("end_time", annotation.end_time))
    if "source_fields" not in updated and annotation.source_fields:
        # A tool's own copy of what is rewritten here no longer says the same: its API reads the new one.
        kept = {k: v for k, v in annotation.source_fields.items() if not (MIRRORED.get(k, set()) & set(updated))}
        if kept != annotation.source_fields:
            updated["source_fields"] = kept
    # An annotation a dataset-limited token wrote, or rewrote, relates to alerts of its own datasets only.
    rewritten = bool({"labels", "datasets"} & set(updated))
    confined = not unlimited(who) or (annotation.confined and not rewritten)
    for name, value in updated.items():
        if name not in CHANGEABLE:
            raise ValueError(f"not a changeable field: {name}")
        setattr(annotation, name, value)
    annotation.confined = confined
    annotation.updated_at = now
    if silence is None:
        rollouts.release(annotation, held, now)
    elif matchers is not None:
        rollouts.release(annotation, held, now)
        rollouts.hold(session, annotation, matchers, now)
    elif held is not None and spanned:
        moved = rollouts.follow(session, annotation, held, now)
        annotation.silence_id = moved.id
    return annotation


async def remove(session: AsyncSession, who: Principal, annotation: Annotation, now: datetime) -> None:
    """Delete it (the caller commits); the silence it holds ends now, and stays listed."""
    require_annotation_write(who, annotation.datasets)
    held = await rollouts.held(session, annotation)
    if held is not None:
        rollouts.require_silence_rights(who)
        rollouts.release(annotation, held, now)
        await session.flush()
    await session.delete(annotation)


async def get_annotation(
    session: AsyncSession, who: Principal, annotation_id: str, *, for_update: bool = False
) -> Annotation:
    """The annotation, if `who` may see it (app/access.py); otherwise a 404, as an unknown id. `for_update`: locked
    for a change (two changes of one rollout's span move its silence one after the other)."""
    stmt = select(Annotation).where(Annotation.id == annotation_id)
    return await _one(session, who, stmt, annotation_id, for_update)


async def get_by_number(session: AsyncSession, who: Principal, number: int, *, for_update: bool = False) -> Annotation:
    """By the integer id Grafana's API uses."""
    return await _one(session, who, select(Annotation).where(Annotation.number == number), str(number), for_update)


async def _one(session: AsyncSession, who: Principal, stmt: Select[Any], shown: str, for_update: bool) -> Annotation:
    stmt = stmt.where(annotation_filter(who))
    annotation = (await session.execute(stmt.with_for_update() if for_update else stmt)).scalar()
    if annotation is None:
        raise not_found("annotation", shown)
    return annotation


# --- /v1/annotations ------------------------------------------------------------------------------------------
async def create_annotation(session: AsyncSession, who: Principal, data: AnnotationCreate) -> AnnotationOut:
    draft = Draft(
        type=data.type,
        title=data.title,
        datasets=datasets_of(data.datasets),
        time=data.time,
        end_time=data.end_time,
        url=data.url,
        description=data.description,
        labels=labels_of(data.labels),
        silence=data.silence.matchers if data.silence is not None else None,
    )
    annotation = add(session, who, draft, utcnow())
    await session.commit()
    return to_out(annotation)


async def update_annotation(
    session: AsyncSession, who: Principal, annotation_id: str, data: AnnotationUpdate
) -> AnnotationOut:
    annotation = await get_annotation(session, who, annotation_id, for_update=True)
    changes: dict[str, Any] = {
        name: value
        for name in ("type", "title", "datasets", "time", "end_time", "url", "description", "labels")
        if (value := getattr(data, name)) is not UNSET
    }
    if "datasets" in changes:
        changes["datasets"] = datasets_of(changes["datasets"])
    if "labels" in changes:
        changes["labels"] = labels_of(changes["labels"])
    silence: list[str] | UnsetType | None = UNSET
    if data.silence is None:
        silence = None
    elif not isinstance(data.silence, UnsetType):
        silence = data.silence.matchers
    await change(session, who, annotation, changes, utcnow(), silence=silence)
    await session.commit()
    return to_out(annotation)


async def delete_annotation(session: AsyncSession, who: Principal, annotation_id: str) -> None:
    annotation = await get_annotation(session, who, annotation_id, for_update=True)
    await remove(session, who, annotation, utcnow())
    await session.commit()


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
    """A monitor's state-change marker (origin `monitor`, never a change), added to the session without
    committing: a monitor's state change writes its annotation in the same transaction as the change. The caller
    has checked the fields (titles are cut to the limit)."""
    now = utcnow()
    annotation = Annotation(
        id=new_id("ann_"),
        type=type_,
        title=title[:TITLE_CHARS],
        description=description[:DESCRIPTION_CHARS] if description else None,
        datasets=datasets_of(datasets),
        time=to_ms(time),
        end_time=None,
        url=url,
        created_at=now,
        updated_at=now,
        labels={},
        origin="monitor",
        confined=False,
        source_fields={},
        silence_id=None,
    )
    session.add(annotation)
    return annotation


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
    matchers: Sequence[Matcher] = (),
) -> ListEnvelope[AnnotationOut]:
    """`range_as_given`: the query string's `start_time` and `end_time` as sent, which the cursor keeps: `now-3h` is
    another instant on each page, and its next page must still be the same list's."""
    if start_time is not None and end_time is not None and end_time < start_time:
        raise BeaconError("invalid_parameter", "`end_time` must not be before `start_time`.", param="end_time")
    names = _dataset_filter(datasets)
    stmt = listing_statement(who, names, start_time, end_time, type_, matchers)
    # The cursor only fits this list with these filters.
    bounds = range_as_given or (_iso(start_time), _iso(end_time))
    scope = (
        "annotations:"
        + msgspec.json.encode([sorted(names or []), *bounds, type_, sorted(str(m) for m in matchers)]).decode()
    )
    rest = [m for m in matchers if not _said_in_sql(m)]
    if rest:
        return await _scan(session, codec, stmt, scope, rest, limit, cursor)
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


def listing_statement(
    who: Principal,
    names: Sequence[str] | None,
    start_time: datetime | None,
    end_time: datetime | None,
    type_: str | None,
    matchers: Sequence[Matcher] = (),
) -> Select[Any]:
    """Annotations `who` may see, on any of `names` (environment-wide ones are on every chart; `*` alone: only
    those), overlapping [start_time, end_time], of `type_`, carrying the labels the equality matchers name."""
    stmt = select(Annotation).where(annotation_filter(who))
    if names:
        wide = func.cardinality(Annotation.datasets) == 0
        named = [n for n in names if n != ENVIRONMENT_WIDE]
        stmt = stmt.where(Annotation.datasets.overlap(named) | wide if named else wide)
    # A point or span overlaps the range when it starts before the range ends and ends after it starts.
    if end_time is not None:
        stmt = stmt.where(Annotation.time <= end_time)
    if start_time is not None:
        stmt = stmt.where(func.coalesce(Annotation.end_time, Annotation.time) >= start_time)
    if type_ is not None:
        stmt = stmt.where(Annotation.type == type_)
    wanted = {m.name: m.value for m in matchers if _said_in_sql(m)}
    if wanted:
        stmt = stmt.where(Annotation.labels.contains(wanted))
    return stmt


def _said_in_sql(m: Matcher) -> bool:
    """`name=value` with a value: label containment, which the labels' GIN index answers."""
    return m.op == "=" and m.value != ""


async def _scan(
    session: AsyncSession,
    codec: CursorCodec,
    stmt: Select[Any],
    scope: str,
    matchers: Sequence[Matcher],
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[AnnotationOut]:
    """A page of the annotations of `stmt` whose labels pass `matchers` (regexes run on RE2, as for alerts), read
    in batches newest first until the page is full."""
    size = check_limit(limit)
    after = codec.decode(scope, cursor) if cursor else None
    if after is not None and len(after) != 2:
        raise BeaconError("invalid_cursor", "The cursor is not valid for this list.", param="cursor")
    found: list[Annotation] = []
    while len(found) <= size:
        batch = stmt.order_by(Annotation.time.desc(), Annotation.id.desc()).limit(SCAN_BATCH)
        if after is not None:
            batch = batch.where(tuple_(Annotation.time, Annotation.id) < tuple_(after[0], after[1]))
        rows = list((await session.execute(batch)).scalars())
        for row in rows:
            if all(m.matches(row.labels or {}) for m in matchers):
                found.append(row)
        if len(rows) < SCAN_BATCH:
            break
        after = [rows[-1].time, rows[-1].id]
    has_more = len(found) > size
    page = found[:size]
    next_cursor = codec.encode(scope, [page[-1].time, page[-1].id]) if has_more else None
    return ListEnvelope(data=[to_out(a) for a in page], has_more=has_more, next_cursor=next_cursor)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dataset_filter(values: Sequence[str] | None) -> list[str] | None:
    """`datasets=a,b` (or repeated `datasets=`): annotations on any of them, and the environment-wide ones
    (drawn on every chart); `datasets=*`: only those."""
    names = [n.strip() for v in values or () for n in v.split(",") if n.strip()]
    for name in names:
        if name != ENVIRONMENT_WIDE and not is_dataset_name(name):
            raise BeaconError("invalid_parameter", f"Invalid dataset name {name!r} in `datasets`.", param="datasets")
    return names or None

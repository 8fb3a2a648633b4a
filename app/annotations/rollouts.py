"""A rollout holds its own alerts: an annotation with `silence: {matchers}` holds a silence of those matchers over
its span, listed with the annotation's id as `created_by`. The silence follows the span: a later `time` or
`end_time` moves it (a `PATCH` that ends the span ends the silence), `silence: null` or deleting the annotation
ends it now. A silence needs an end: an annotation without `end_time` cannot hold one (no open-ended mutes).

Silences concern every dataset's alerts: only a token with `silences:write` and no dataset limit makes,
moves or ends one this way (app/access.py).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import admit, requires
from app.auth import Principal
from app.db.advisory import Space, lock
from app.db.annotation import Annotation
from app.db.silence import Silence
from app.errors import BeaconError
from app.request_ids import new_id
from app.routing import silences
from app.routing.matchers import Matcher, parse_matcher

# A silence held by an annotation is a silence's change (app/access.py).
SILENCE_RIGHTS = requires("silences:write", unlimited="silences (a rollout's silence holds alerts of every dataset)")


def require_silence_rights(who: Principal) -> None:
    admit(who, SILENCE_RIGHTS)


def check_matchers(texts: list[str]) -> list[Matcher]:
    return silences.checked_matchers(texts, "silence.matchers")


def _check_span(time: datetime, end_time: datetime | None) -> datetime:
    if end_time is None:
        raise BeaconError(
            "invalid_field",
            "An annotation that holds a silence needs an `end_time`: the silence ends with its span (no open-ended "
            "mutes). Set `end_time`, or leave `silence` out.",
            param="end_time",
        )
    if end_time <= time:
        raise BeaconError(
            "invalid_field", "An annotation that holds a silence needs `end_time` after `time`.", param="end_time"
        )
    return end_time


def hold(session: AsyncSession, annotation: Annotation, matchers: list[Matcher], now: datetime) -> Silence:
    """A new silence of `matchers` over the annotation's span, linked to it (the caller commits). A span already
    over leaves an expired silence: the record of what it held."""
    ends_at = _check_span(annotation.time, annotation.end_time)
    silence = Silence(
        id=new_id("sil_"),
        matchers=[str(m) for m in matchers],
        starts_at=annotation.time,
        ends_at=ends_at,
        comment=f"Rollout: {annotation.title}"[:4096],
        created_by=annotation.id,
        created_at=now,
        updated_at=now,
    )
    session.add(silence)
    annotation.silence_id = silence.id
    return silence


async def held(session: AsyncSession, annotation: Annotation) -> Silence | None:
    if annotation.silence_id is None:
        return None
    await lock(session, Space.SILENCE, annotation.silence_id)  # as silences.get(for_update=True)
    stmt = select(Silence).where(Silence.id == annotation.silence_id).execution_options(populate_existing=True)
    return (await session.execute(stmt)).scalar_one_or_none()


def follow(session: AsyncSession, annotation: Annotation, silence: Silence, now: datetime) -> Silence:
    """Move the held silence with the annotation's span. One that has expired is kept as it was; a span that goes
    on after it gets a new silence of the same matchers."""
    ends_at = _check_span(annotation.time, annotation.end_time)
    if silence.ends_at <= now:  # expired: a silence is never changed once over
        if ends_at > now:
            return hold(session, annotation, [parse_matcher(m) for m in silence.matchers], now)
        return silence
    if silence.starts_at > now:  # pending: it may still start elsewhere
        silence.starts_at = annotation.time
    silence.ends_at = max(ends_at, silence.starts_at)
    silence.updated_at = now
    return silence


def release(annotation: Annotation, silence: Silence | None, now: datetime) -> None:
    """End the held silence now (it stays listed, expired) and unlink it."""
    if silence is not None:
        silences.end(silence, now)
    annotation.silence_id = None

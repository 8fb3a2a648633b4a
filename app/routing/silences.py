"""Silences: create, list by state, get, change, expire. A silence is `pending` before `starts_at`, `active`
until `ends_at`, then `expired` (kept, and no longer changeable). Expiring one sets its end to now."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import msgspec
from msgspec import UNSET
from sqlalchemy import Select, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import admits_datasets, require_unlimited, unlimited
from app.auth import Principal
from app.db.advisory import Space, lock
from app.db.silence import Silence
from app.errors import BeaconError, check_choice, not_found
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.request_ids import new_id
from app.routing.matchers import Matcher, check_matchers
from app.routing.schemas import SILENCE_STATES, SilenceCreate, SilenceOut, SilenceUpdate
from app.schemas import TIME_RANGE, in_time_range
from app.timefmt import iso_ms
from app.timeparams import to_ms


def state_of(s: Silence, now: datetime) -> str:
    if now < s.starts_at:
        return "pending"
    return "active" if now < s.ends_at else "expired"


def to_out(s: Silence, now: datetime) -> SilenceOut:
    return SilenceOut(
        id=s.id,
        matchers=list(s.matchers),
        starts_at=iso_ms(s.starts_at),
        ends_at=iso_ms(s.ends_at),
        comment=s.comment,
        created_by=s.created_by,
        state=state_of(s, now),
        created_at=iso_ms(s.created_at),
        updated_at=iso_ms(s.updated_at),
    )


def checked_matchers(texts: list[str], param: str = "matchers") -> list[Matcher]:
    """A silence's matchers (a 400 naming `param` when they are bad, or would match every alert)."""
    if not texts:
        raise BeaconError("invalid_field", "A silence needs at least one matcher.", param=param)
    found = check_matchers(texts, param)
    if all(m.matches({}) for m in found):
        raise BeaconError(
            "invalid_field",
            "At least one matcher must not match an empty label value, or the silence would match every alert.",
            param=param,
        )
    return found


def _check_times(starts_at: datetime, ends_at: datetime, now: datetime) -> None:
    if ends_at <= now:
        raise BeaconError("invalid_field", "`ends_at` must be in the future.", param="ends_at")
    if ends_at <= starts_at:
        raise BeaconError("invalid_field", "`ends_at` must be after `starts_at`.", param="ends_at")


async def create(
    session: AsyncSession, who: Principal, data: SilenceCreate, now: datetime, *, replacing: Silence | None = None
) -> SilenceOut:
    """A new silence; `replacing` (locked by the caller) is expired in the same transaction, once the new one
    has passed every check, so a refused replacement leaves the old silence as it was."""
    require_unlimited(who, "silences")
    matchers = checked_matchers(data.matchers)
    starts_at = max(to_ms(data.starts_at), now) if data.starts_at else now
    ends_at = to_ms(data.ends_at)
    _check_times(starts_at, ends_at, now)
    if replacing is not None:
        _end(replacing, now)
    silence = Silence(
        id=new_id("sil_"),
        matchers=[str(m) for m in matchers],
        starts_at=starts_at,
        ends_at=ends_at,
        comment=data.comment,
        created_by=data.created_by or who.token_id,
        created_at=now,
        updated_at=now,
    )
    session.add(silence)
    await session.commit()
    return to_out(silence, now)


async def get(session: AsyncSession, silence_id: str, *, for_update: bool = False) -> Silence:
    """`for_update`: held until the transaction ends (an advisory lock on its id; `silences` is a reference table
    on Citus) and read once held."""
    if for_update:
        await lock(session, Space.SILENCE, silence_id)
    stmt = select(Silence).where(Silence.id == silence_id).execution_options(populate_existing=for_update)
    found = (await session.execute(stmt)).scalar_one_or_none()
    if found is None:
        raise not_found("silence", silence_id)
    return found


# Silences with a matcher on the `dataset` label (stored as `str(Matcher)`: the name, then the operator).
_ON_DATASET = text("EXISTS (SELECT FROM unnest(silences.matchers) m WHERE m LIKE 'dataset=%' OR m LIKE 'dataset!%')")


async def get_visible(session: AsyncSession, who: Principal, silence_id: str) -> Silence:
    """A silence the token may see (app/access.py); another is not found, as an unknown id is."""
    found = await get(session, silence_id)
    if not admits_datasets(who, check_matchers(found.matchers, "matchers")):
        raise not_found("silence", silence_id)
    return found


async def hidden_ids(session: AsyncSession, who: Principal) -> list[str]:
    """The silences a dataset-limited token may not see: those whose matchers on `dataset` admit none of its
    datasets. Only silences with such a matcher are read to tell (a regex is decided by RE2)."""
    if unlimited(who):
        return []
    rows = await session.execute(select(Silence.id, Silence.matchers).where(_ON_DATASET))
    return [sid for sid, texts in rows if not admits_datasets(who, check_matchers(texts, "matchers"))]


async def _visible(session: AsyncSession, who: Principal, stmt: Select[Any]) -> Select[Any]:
    hidden = await hidden_ids(session, who)
    return stmt.where(Silence.id.not_in(hidden)) if hidden else stmt


def _by_state(stmt: Select[Any], state: str, now: datetime) -> Select[Any]:
    if state == "pending":
        return stmt.where(Silence.starts_at > now)
    if state == "active":
        return stmt.where(Silence.starts_at <= now, Silence.ends_at > now)
    return stmt.where(Silence.ends_at <= now)


async def list_silences(
    session: AsyncSession,
    codec: CursorCodec,
    who: Principal,
    now: datetime,
    *,
    state: str | None,
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[SilenceOut]:
    stmt = await _visible(session, who, select(Silence))
    if state is not None:
        stmt = _by_state(stmt, check_choice(state, SILENCE_STATES, "state"), now)
    return await paginate(
        session,
        stmt,
        codec=codec,
        scope=f"silences:{msgspec.json.encode([state]).decode()}",
        keys=(Silence.created_at, Silence.id),
        render=lambda s: to_out(s, now),
        limit=limit,
        cursor=cursor,
    )


async def all_silences(
    session: AsyncSession, who: Principal, now: datetime, *, state: str | None = None
) -> list[SilenceOut]:
    """Every silence the token may see, newest first (for callers that list without pages, such as a compatible
    API)."""
    stmt = await _visible(session, who, select(Silence).order_by(Silence.created_at.desc(), Silence.id.desc()))
    if state is not None:
        stmt = _by_state(stmt, check_choice(state, SILENCE_STATES, "state"), now)
    return [to_out(s, now) for s in (await session.execute(stmt)).scalars()]


async def update(
    session: AsyncSession, who: Principal, silence_id: str, data: SilenceUpdate, now: datetime
) -> SilenceOut:
    require_unlimited(who, "silences")
    silence = await get(session, silence_id, for_update=True)
    state = state_of(silence, now)
    if state == "expired":
        raise _expired()
    if data.matchers is not UNSET:
        silence.matchers = [str(m) for m in checked_matchers(data.matchers)]
    if data.comment is not UNSET:
        silence.comment = data.comment
    if data.starts_at is not UNSET:
        starts_at = to_ms(data.starts_at)
        if state == "active" and starts_at != silence.starts_at:
            raise BeaconError(
                "invalid_field", "An active silence's `starts_at` cannot move; change `ends_at`.", param="starts_at"
            )
        silence.starts_at = max(starts_at, now)
    if data.ends_at is not UNSET:
        silence.ends_at = to_ms(data.ends_at)
    _check_times(silence.starts_at, silence.ends_at, now)
    silence.updated_at = now
    await session.commit()
    return to_out(silence, now)


async def expire(session: AsyncSession, who: Principal, silence_id: str, now: datetime) -> SilenceOut:
    require_unlimited(who, "silences")
    silence = await get(session, silence_id, for_update=True)
    if state_of(silence, now) != "expired":
        _end(silence, now)
        await session.commit()
    return to_out(silence, now)


async def extend(session: AsyncSession, who: Principal, silence_id: str, by: timedelta, now: datetime) -> SilenceOut:
    """Move the end of a pending or active silence later by `by`, read and written under the row's lock: of two
    extends at once, the second waits and adds to the end the first wrote."""
    require_unlimited(who, "silences")
    silence = await get(session, silence_id, for_update=True)
    if state_of(silence, now) == "expired":
        raise _expired()
    if not in_time_range(silence.ends_at + by):
        message = f"Extended, the silence would end too late: it must end {TIME_RANGE}."
        raise BeaconError("invalid_field", message, param="duration")
    silence.ends_at = silence.ends_at + by
    _check_times(silence.starts_at, silence.ends_at, now)
    silence.updated_at = now
    await session.commit()
    return to_out(silence, now)


def _expired() -> BeaconError:
    return BeaconError("conflict", "This silence has expired; create a new one instead.")


def end(silence: Silence, now: datetime) -> None:
    """End the silence now (kept, as expired); one already expired is left as it is."""
    _end(silence, now)


def _end(silence: Silence, now: datetime) -> None:
    if state_of(silence, now) != "expired":
        silence.starts_at = min(silence.starts_at, now)
        silence.ends_at = now
        silence.updated_at = now

"""Names to show for the ids the services answer (notifiers, monitors): the one way every console page looks them
up, each under the scope (and the datasets) its API would need."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import monitor_filter
from app.auth import Principal
from app.db.monitor import Monitor
from app.notifiers import service as notifiers


async def notifier_names(db: AsyncSession, who: Principal, ids: Iterable[str]) -> dict[str, str]:
    """The names of these notifiers, for a token that may read notifiers (others see the ids alone)."""
    if not who.has_scope("notifiers:read"):
        return {}
    return await notifiers.names_of(db, ids)


async def monitor_names(db: AsyncSession, who: Principal, ids: Iterable[str]) -> dict[str, str]:
    """The names of these monitors that the token may read (another dataset's stays an id, as a 404 would)."""
    wanted = sorted(set(ids))
    if not wanted or not who.has_scope("monitors:read"):
        return {}
    rows = await db.execute(select(Monitor.id, Monitor.name).where(Monitor.id.in_(wanted), monitor_filter(who)))
    return {row.id: row.name for row in rows}

"""Notifier names to show beside their ids, the one way every console page looks them up."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.notifiers import service as notifiers


async def notifier_names(db: AsyncSession, who: Principal, ids: Iterable[str]) -> dict[str, str]:
    """The names of these notifiers, for a token that may read notifiers (others see the ids alone)."""
    if not who.has_scope("notifiers:read"):
        return {}
    return await notifiers.names_of(db, ids)

"""Alertmanager's receivers, as Beacon's routes name notifiers.

An Alertmanager route has one receiver; a Beacon route lists notifiers. A route's receiver is therefore named
after its notifiers: one notifier is a receiver of its name, several are one receiver named `a+b`, none is
`none` (Alertmanager's "blackhole" receiver, with no integration). The same names appear in the status
document's config, in each alert's `receivers`, on alert groups, and in `GET /api/v2/receivers`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.notifier import Notifier
from app.routing.tree import Route

NO_RECEIVER = "none"


async def notifier_names(session: AsyncSession) -> dict[str, str]:
    """Notifier id -> name."""
    rows = await session.execute(select(Notifier.id, Notifier.name))
    return {row.id: row.name for row in rows}


def receiver_name(notifier_ids: Iterable[str], names: Mapping[str, str]) -> str:
    return "+".join(names.get(i, i) for i in notifier_ids) or NO_RECEIVER


def receivers_of(routes: Iterable[Route], names: Mapping[str, str]) -> list[str]:
    """The receivers of the routes an alert takes, each once, in the tree's order."""
    return list(dict.fromkeys(receiver_name(r.notifier_ids, names) for r in routes))

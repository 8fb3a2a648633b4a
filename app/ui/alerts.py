"""Console page for alerts: the groups the routing tree forms of them now, each alert firing or suppressed and
why (silences, inhibiting alerts, mute intervals), with a button that opens a silence prefilled from it.

What a token sees is what `GET /v1/alerts/groups` gives it (a dataset-limited token: only its monitors' alerts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import may, requires
from app.auth import Principal
from app.errors import BeaconError
from app.pace import bounded
from app.routing import service as routing
from app.routing.schemas import ALERT_STATES, AlertGroupOut, AlertOut
from app.routing.texts import lines
from app.services import Services
from app.ui.names import notifier_names
from app.ui.render import signed_page_off_loop
from app.ui.session import signed_in
from beacon_client.notation.labels import describe

# Silences concern every dataset's alerts: only an unlimited token with `silences:write` makes them.
SILENCE_WRITE = requires("silences:write", unlimited="silences")


def can_silence(who: Principal) -> bool:
    return may(who, SILENCE_WRITE)


MAX_GROUPS = 100
MAX_PER_GROUP = 20


@dataclass
class GroupView:
    group: AlertGroupOut
    alerts: list[AlertOut]  # the ones shown
    more: int  # and how many are not


def group_views(groups: list[AlertGroupOut], only: str | None) -> tuple[list[GroupView], int]:
    """The groups to show, and how many are left out: one group whole when asked for (`only`), else the first
    MAX_GROUPS with their first MAX_PER_GROUP alerts each, so that an outage of thousands of alerts still
    gives a page a browser shows at once."""
    if only is not None:
        return [GroupView(g, g.alerts, 0) for g in groups if g.group_key == only], 0
    shown = [GroupView(g, g.alerts[:MAX_PER_GROUP], max(0, len(g.alerts) - MAX_PER_GROUP)) for g in groups]
    return shown[:MAX_GROUPS], max(0, len(shown) - MAX_GROUPS)


async def inhibitor_names(
    db: AsyncSession, who: Principal, groups: list[AlertGroupOut], views: list[GroupView]
) -> dict[str, str]:
    """The alertname of each alert that inhibits one shown: from the groups when it is in one, else all in one
    query (an inhibitor the token may not see, or resolved and forgotten since, stays a fingerprint)."""
    listed = {a.fingerprint: a for g in groups for a in g.alerts}
    wanted = {fp for v in views for a in v.alerts for fp in a.inhibited_by}
    found = {fp: listed[fp].labels.get("alertname", fp) for fp in wanted if fp in listed}
    found.update(await routing.alert_names(db, who, wanted - set(found)))
    return found


@get("/alerts", include_in_schema=False, opt=requires("alerts:read"))
async def alert_list(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    services: Services,
    matchers: str | None = None,
    state_: Annotated[str | None, QueryParameter(name="state")] = None,
    group: str | None = None,
) -> Response[str]:
    who = await signed_in(request)
    renv = services.routing_env
    filters = lines(matchers)
    state = state_ or None
    groups: list[AlertGroupOut] = []
    error = None
    try:
        flt = routing.alert_filter(filters, state)
    except BeaconError as exc:  # shown beside the filter: the form keeps what was typed
        error = exc.message
    else:  # the work grows with alerts x silences: bounded as the API's view is (app/pace.py)
        seconds = services.settings.alert_view_timeout_seconds
        work = routing.alert_groups(db, renv, who, flt)
        groups = await bounded(request.receive, work, seconds=seconds, what="The alerts page")
    counts = {s: 0 for s in ALERT_STATES}
    seen: set[str] = set()
    for g in groups:  # an alert that `continue` sends down two routes is in two groups: counted once
        for a in g.alerts:
            if a.fingerprint not in seen:
                seen.add(a.fingerprint)
                counts[a.state] += 1
    views, more_groups = group_views(groups, group or None)
    return await signed_page_off_loop(
        request,
        "alerts.html",
        inhibitors=await inhibitor_names(db, who, groups, views),
        shown={a.fingerprint for v in views for a in v.alerts},
        nav="alerts",
        status_code=400 if error else 200,
        groups=views,
        more_groups=more_groups,
        total_groups=len(groups),
        group=group or "",
        counts=counts,
        matchers="\n".join(filters),
        state=state or "",
        states=ALERT_STATES,
        error=error,
        names=await notifier_names(db, who, {n for v in views for n in v.group.notifier_ids}),
        can_silence=can_silence(who),
        can_read_silences=who.has_scope("silences:read"),
        can_read_monitors=who.has_scope("monitors:read"),
        describe=describe,
    )

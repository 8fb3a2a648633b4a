"""Console page for the routing tree: every route with its matchers and what it sends where (values a route
inherits from its parent marked as such, routes muted now flagged), the inhibit rules and time intervals, and a
form that tests a label set the way `POST /v1/routing/test` does (nothing is stored or sent), highlighting the
routes it takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar import Request, Response, get
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.errors import BeaconError
from app.routing import document as d
from app.routing import service as routing
from app.routing.schemas import RoutingTestOut
from app.routing.suppression import Suppressor
from app.routing.texts import lines
from app.routing.tree import TIMERS, Route
from app.services import Services
from app.ui.names import notifier_names
from app.ui.render import signed_page
from app.ui.session import signed_in
from beacon_client.notation.labels import parse_labels

INHERITABLE = ("notifier_ids", "group_by", *TIMERS, "changes_window_seconds")


@dataclass
class RouteView:
    route: Route  # as compiled: what it does, inherited values included
    raw: d.Route  # as written: what it sets itself
    muted_by: list[str]
    inherited: set[str] = field(default_factory=set)
    routes: list[RouteView] = field(default_factory=list)


def route_views(sup: Suppressor) -> RouteView:
    def view(route: Route, raw: d.Route, is_root: bool) -> RouteView:
        inherited = set() if is_root else {name for name in INHERITABLE if getattr(raw, name) is None}
        children = [view(c, r, False) for c, r in zip(route.routes, raw.routes, strict=True)]
        return RouteView(route, raw, sup.route_muted_by(route), inherited, children)

    return view(sup.tree.root, sup.tree.document.route, True)


def duration(seconds: int) -> str:
    if seconds == 0:
        return "0s"
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@get("/routing", include_in_schema=False, opt=requires("routing:read"))
async def routing_page(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, labels: str | None = None
) -> Response[str]:
    who = await signed_in(request)
    renv = services.routing_env
    # One read of the document: the version shown is the tree's even while someone replaces it.
    stored = await routing.stored_routing(db)
    sup = await routing.suppressor(db, renv.now(), who, stored)
    typed = lines(labels)
    result: RoutingTestOut | None = None
    error = None
    if typed:
        try:
            result = await routing.test_routing(db, renv, who, parse_labels(typed), sup)
        except ValueError as exc:
            error = f"{exc}."
        except BeaconError as exc:
            if exc.status != 400:
                raise
            error = exc.message
    return signed_page(
        request,
        "routing.html",
        nav="routing",
        status_code=400 if error else 200,
        version=stored.version,
        tree=route_views(sup),
        document=sup.tree.document,
        names=await notifier_names(db, who, sup.tree.notifier_ids()),
        labels="\n".join(typed),
        result=result,
        taken={r.route for r in result.routes} if result else set(),
        error=error,
        duration=duration,
        can_read_silences=who.has_scope("silences:read"),
        can_read_alerts=who.has_scope("alerts:read"),
    )

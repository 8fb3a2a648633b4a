"""/api/v2: Alertmanager's API (its `api/v2/openapi.yaml`) over Beacon's routing, with Beacon's bearer tokens
and scopes. Thin handlers over app/amapi/service.py; the paths, parameters and bodies are Alertmanager's."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, Router, delete, get, post
from litestar.di import Provide
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.amapi import schemas as am
from app.amapi import service
from app.amapi.errors import exception_handlers
from app.auth import principal
from app.pace import encoded
from app.routing.controllers import view
from app.services import Services


def _empty() -> Response[bytes]:
    """Alertmanager's answer to a post of alerts or a delete: 200 with no body."""
    return Response(content=b"", status_code=200)


Filters = Annotated[list[str] | None, QueryParameter(name="filter", description="Matchers; all must hold.")]


def alert_query(
    filters: Filters = None,
    active: bool = True,
    silenced: bool = True,
    inhibited: bool = True,
    receiver: str | None = None,
) -> service.AlertQuery:
    """The filters `GET /alerts` and `GET /alerts/groups` share (their query parameters)."""
    return service.AlertQuery(filters, active, silenced, inhibited, receiver)


class AlertsController(Controller):
    path = "/alerts"
    dependencies = {"wanted": Provide(alert_query, sync_to_thread=False)}

    @post("/", status_code=200, opt=requires("alerts:write"))
    async def post_alerts(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: list[am.PostableAlert]
    ) -> Response[bytes]:
        await service.post_alerts(db, services.routing_env, principal(request), data)
        return _empty()

    @get("/", opt=requires("alerts:read"))
    async def get_alerts(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        services: Services,
        wanted: service.AlertQuery,
        unprocessed: bool = True,  # Beacon processes an alert as it is posted: none is ever unprocessed
    ) -> list[am.GettableAlert]:
        work = service.list_alerts(db, services.routing_env, principal(request), wanted)
        found = await view(request, services, work, "Listing alerts")
        body = await encoded(found, len(found))  # a big one off the event loop
        return found if body is None else Response(body, media_type="application/json")  # type: ignore[return-value]

    @get("/groups", opt=requires("alerts:read"))
    async def get_alert_groups(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, wanted: service.AlertQuery
    ) -> list[am.AlertGroup]:
        work = service.alert_groups(db, services.routing_env, principal(request), wanted)
        found = await view(request, services, work, "Grouping alerts")
        body = await encoded(found, sum(len(g.alerts) for g in found))
        return found if body is None else Response(body, media_type="application/json")  # type: ignore[return-value]


class SilencesController(Controller):
    path = "/"

    @get("/silences", opt=requires("silences:read"))
    async def get_silences(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, filters: Filters = None
    ) -> list[am.GettableSilence]:
        return await service.list_silences(db, services.routing_env, principal(request), filters)

    @post("/silences", status_code=200, opt=requires("silences:write"))
    async def post_silences(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: am.PostableSilence
    ) -> am.SilenceCreated:
        """Create a silence, or change the one `id` names (Alertmanager's rules: when it cannot change in place,
        it is expired and a new one replaces it)."""
        return await service.post_silence(db, services.routing_env, principal(request), data)

    @get("/silence/{silence_id:str}", opt=requires("silences:read"))
    async def get_silence(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, silence_id: str
    ) -> am.GettableSilence:
        return await service.get_silence(db, services.routing_env, principal(request), silence_id)

    @delete("/silence/{silence_id:str}", status_code=200, opt=requires("silences:write"))
    async def delete_silence(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, silence_id: str
    ) -> Response[bytes]:
        await service.delete_silence(db, services.routing_env, principal(request), silence_id)
        return _empty()


class GeneralController(Controller):
    path = "/"

    @get("/status", opt=requires("routing:read"))
    async def get_status(self, db: AsyncSession, services: Services) -> am.AlertmanagerStatus:
        return await service.status(db, services.started_at)

    @get("/receivers", opt=requires("routing:read"))
    async def get_receivers(self, db: AsyncSession) -> list[am.Receiver]:
        return await service.receivers(db)


def amapi_router() -> Router:
    """Mounted at /api/v2, outside the OpenAPI document (its contract is Alertmanager's own)."""
    return Router(
        path="/api/v2",
        route_handlers=[AlertsController, SilencesController, GeneralController],
        exception_handlers=exception_handlers(),
        include_in_schema=False,
    )

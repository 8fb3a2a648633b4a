from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import admit, requires
from app.auth import principal
from app.deliveries.worker import serve
from app.monitors import service
from app.monitors.schemas import (
    EvaluateRequest,
    EvaluationOut,
    MonitorCreate,
    MonitorEventOut,
    MonitorOut,
    MonitorSaved,
    MonitorUpdate,
)
from app.pagination import CursorCodec, Limit, ListEnvelope
from app.routing.jobs import wake
from app.services import Services

READ = requires("monitors:read")
WRITE = requires("monitors:write")


def _when_due(services: Services) -> None:
    """A monitor created or changed (its next run may now be the first due): this process's loop looks again."""
    if services.monitor_loop is not None:
        services.monitor_loop.wake()


class MonitorController(Controller):
    path = "/v1/monitors"
    tags = ["monitors"]

    @post("/", status_code=201, opt=WRITE)
    async def create(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: MonitorCreate
    ) -> MonitorSaved:
        """Create a monitor.

        A threshold monitor compares a `summarize` query's value with `threshold`; a match_event monitor notifies of
        each matching event. The query is checked now. Needs `monitors:write`."""
        out = await service.create_monitor(db, principal(request), data)
        _when_due(services)
        return out

    @get("/", opt=READ)
    async def list(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        state_: Annotated[str | None, QueryParameter(name="state", description="Only monitors in this state.")] = None,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[MonitorOut]:
        """List monitors.

        Newest first, optionally in one state. Needs `monitors:read`."""
        return await service.list_monitors(db, codec, principal(request), state=state_, limit=limit, cursor=cursor)

    @get("/{monitor_id:str}", opt=READ)
    async def retrieve(self, request: Request[Any, Any, Any], db: AsyncSession, monitor_id: str) -> MonitorOut:
        """Retrieve a monitor.

        With its state, last value and next evaluation. Needs `monitors:read`."""
        return await service.render(db, await service.get_monitor(db, principal(request), monitor_id))

    @patch("/{monitor_id:str}", opt=WRITE)
    async def update(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        services: Services,
        monitor_id: str,
        data: MonitorUpdate,
    ) -> MonitorSaved:
        """Update a monitor.

        Partial: absent fields stay as they are. Needs `monitors:write`."""
        base_url = services.settings.base_url
        out = await service.update_monitor(db, principal(request), monitor_id, data, base_url=base_url)
        wake(services.routing_env)  # its alerts may have changed
        _when_due(services)
        return out

    @delete("/{monitor_id:str}", status_code=204, opt=WRITE)
    async def remove(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, monitor_id: str
    ) -> None:
        """Delete a monitor.

        Needs `monitors:write`."""
        await service.delete_monitor(db, principal(request), monitor_id)
        wake(services.routing_env)  # its alerts resolved

    @post("/{monitor_id:str}/evaluate", status_code=200, opt=READ)
    async def evaluate(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        services: Services,
        monitor_id: str,
        data: EvaluateRequest | None = None,
    ) -> EvaluationOut:
        """Evaluate now. `{"dry_run": true}` (monitors:read) changes nothing and notifies no one; a real run
        (monitors:write) records and notifies like a run of the loop."""
        dry_run = data.dry_run if data is not None else False
        if not dry_run:  # a real run records and notifies: a change, which the route's read scope does not cover
            admit(principal(request), WRITE)
        out, deliveries = await service.evaluate_now(
            db, services.routing_env, principal(request), monitor_id, dry_run=dry_run
        )
        if deliveries and services.settings.run_scheduler:
            serve(services.dispatcher)  # the process's delivery worker sends them now
        return out

    @get("/{monitor_id:str}/history", opt=READ)
    async def history(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        monitor_id: str,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[MonitorEventOut]:
        """List a monitor's history.

        Its state changes and matches, newest first, with the deliveries each caused. Needs `monitors:read`."""
        return await service.history(db, codec, principal(request), monitor_id, limit=limit, cursor=cursor)

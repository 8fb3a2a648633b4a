from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import Parameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.auth import principal
from app.deliveries import service
from app.deliveries.schemas import DeliveryOut, PreviewOut, PreviewRequest
from app.notifiers.controllers import READ, WRITE
from app.pagination import CursorCodec, Limit, ListEnvelope
from app.services import Services


class NotifierDeliveryController(Controller):
    """The delivery routes under a notifier: send a test, preview a message, list its deliveries."""

    path = "/v1/notifiers"
    tags = ["notifiers"]

    @post("/{notifier_id:str}/test", status_code=201, opt=WRITE)
    async def send_test(self, db: AsyncSession, services: Services, notifier_id: str) -> DeliveryOut:
        """Send a test message now.

        Returns the delivery with its outcome. Needs `notifiers:write`."""
        return await service.send_test(db, services.delivery_env, notifier_id)

    @post("/{notifier_id:str}/preview", status_code=200, opt=READ)
    async def preview(
        self, db: AsyncSession, services: Services, notifier_id: str, data: PreviewRequest | None = None
    ) -> PreviewOut:
        """Preview a notifier's message, without sending it.

        The message rendered for `event` (a test event when absent). Needs `notifiers:read`."""
        return await service.preview(db, services.delivery_env, notifier_id, data.event if data else None)

    @get("/{notifier_id:str}/deliveries", opt=READ)
    async def deliveries(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        notifier_id: str,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[DeliveryOut]:
        """List a notifier's deliveries.

        Newest first. Needs `notifiers:read`."""
        return await service.list_for_notifier(db, codec, principal(request), notifier_id, limit=limit, cursor=cursor)


class DeliveryController(Controller):
    path = "/v1/deliveries"
    tags = ["deliveries"]

    @get("/", opt=READ)
    async def list(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        notifier_id: Annotated[str | None, Parameter(description="Only this notifier's deliveries.")] = None,
        monitor_id: Annotated[str | None, Parameter(description="Only this monitor's deliveries.")] = None,
        status: Annotated[str | None, Parameter(description="pending, retrying, succeeded or failed.")] = None,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[DeliveryOut]:
        """List deliveries.

        Newest first, filtered by notifier, monitor or status. Needs `notifiers:read`."""
        return await service.list_deliveries(
            db,
            codec,
            principal(request),
            notifier_id=notifier_id,
            monitor_id=monitor_id,
            status=status,
            limit=limit,
            cursor=cursor,
        )

    @get("/{delivery_id:str}", opt=READ)
    async def retrieve(self, request: Request[Any, Any, Any], db: AsyncSession, delivery_id: str) -> DeliveryOut:
        """Retrieve a delivery.

        With its attempts, each with the status and detail of the destination's answer. Needs `notifiers:read`."""
        return await service.get_delivery(db, principal(request), delivery_id)

    # A delivery belongs to its monitor's dataset (app/access.py): a limited token retries its own.
    @post("/{delivery_id:str}/retry", status_code=200, opt=requires("notifiers:write"))
    async def retry(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, delivery_id: str
    ) -> DeliveryOut:
        """Retry a failed delivery now.

        409 while it is being sent or once it has succeeded. Needs `notifiers:write`."""
        return await service.retry(db, services.delivery_env, principal(request), delivery_id)

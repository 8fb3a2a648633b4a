"""Console page for notifiers: each one's target, whether it is told of resolved alerts (and a switch), last
delivery outcome and recent deliveries; a test button."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.response import Redirect
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import NOTIFIERS, may, requires
from app.deliveries import service as deliveries
from app.notifiers import service as notifiers
from app.notifiers.schemas import NotifierUpdate
from app.pagination import MAX_LIMIT, CursorCodec
from app.services import Services
from app.ui.forms import Form
from app.ui.names import monitor_names, notifier_names
from app.ui.render import signed_page
from app.ui.session import check_csrf, signed_in

RECENT = 5  # deliveries shown per notifier


# Notifiers are shared configuration: a token limited to datasets changes none, on the API or here (app/access.py).
TEST = requires("notifiers:write", unlimited=NOTIFIERS)


@get("/notifiers", include_in_schema=False, opt=requires("notifiers:read"))
async def notifier_list(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
    cursor: str | None = None,
    tested: str | None = None,
) -> Response[str]:
    who = await signed_in(request)
    found = await notifiers.list_notifiers(db, codec, type_=None, limit=MAX_LIMIT, cursor=cursor)
    recent = {
        n.id: (
            await deliveries.list_deliveries(
                db, codec, who, notifier_id=n.id, monitor_id=None, status=None, limit=RECENT, cursor=None
            )
        ).data
        for n in found.data
    }
    test_result = await deliveries.get_delivery(db, who, tested) if tested else None
    shown = {n.id for n in found.data}
    # A test sent from a card on another page of the list is named too.
    names = await notifier_names(db, who, shown | ({test_result.notifier_id} if test_result else set()))
    monitors = await monitor_names(db, who, (d.monitor_id for ds in recent.values() for d in ds if d.monitor_id))
    return signed_page(
        request,
        "notifiers.html",
        nav="notifiers",
        notifiers=found.data,
        next_cursor=found.next_cursor,
        recent=recent,
        shown=shown,
        names=names,
        monitor_names=monitors,
        test_result=test_result,
        can_test=may(who, TEST),
    )


@post("/notifiers/{notifier_id:str}/test", include_in_schema=False, status_code=303, opt=TEST)
async def notifier_test(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, notifier_id: str, data: Form
) -> Redirect:
    check_csrf(request, data.get("csrf"))  # signed in and allowed: the console's guard checked both
    sent = await deliveries.send_test(db, services.delivery_env, notifier_id)
    # Post/redirect/get: a reload shows the outcome again instead of sending a second test.
    return Redirect(f"/ui/notifiers?tested={sent.id}#{notifier_id}", status_code=303)


@post("/notifiers/{notifier_id:str}/send-resolved", include_in_schema=False, status_code=303, opt=TEST)
async def notifier_send_resolved(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, notifier_id: str, data: Form
) -> Redirect:
    """Switch `send_resolved` (the form says which way: `value` is `on` or `off`)."""
    check_csrf(request, data.get("csrf"))  # signed in and allowed: the console's guard checked both
    send = data.get("value") == "on"
    await notifiers.update_notifier(db, services.notifier_env, notifier_id, NotifierUpdate(send_resolved=send))
    return Redirect(f"/ui/notifiers#{notifier_id}", status_code=303)

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, patch, post
from litestar.params import QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import NOTIFIERS, requires
from app.notifiers import service
from app.notifiers.schemas import NotifierCreate, NotifierOut, NotifierUpdate, NotifierWithSecret
from app.pagination import CursorCodec, Limit, ListEnvelope
from app.services import Services

READ = requires("notifiers:read")
# Notifiers are shared configuration: a token limited to datasets changes none (app/access.py).
WRITE = requires("notifiers:write", unlimited=NOTIFIERS)


class NotifierController(Controller):
    path = "/v1/notifiers"
    tags = ["notifiers"]

    @post("/", status_code=201, opt=WRITE)
    async def create(self, data: NotifierCreate, db: AsyncSession, services: Services) -> NotifierWithSecret:
        """Create a notifier (a destination for notifications).

        `config` is checked by the notifier type's adapter and never echoed; a webhook's signing secret is in the 201
        body, once. Needs `notifiers:write`."""
        return await service.create_notifier(db, services.notifier_env, data)

    @get("/", opt=READ)
    async def list(
        self,
        db: AsyncSession,
        codec: CursorCodec,
        type_: Annotated[str | None, QueryParameter(name="type", description="Only this type.")] = None,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[NotifierOut]:
        """List notifiers.

        Newest first, optionally of one type. Needs `notifiers:read`."""
        return await service.list_notifiers(db, codec, type_=type_, limit=limit, cursor=cursor)

    @get("/{notifier_id:str}", opt=READ)
    async def retrieve(self, db: AsyncSession, notifier_id: str) -> NotifierOut:
        """Retrieve a notifier.

        Its type, a secret-free `target` and its state; never its configuration. Needs `notifiers:read`."""
        return service.to_out(await service.get_notifier(db, notifier_id))

    @patch("/{notifier_id:str}", opt=WRITE)
    async def update(self, db: AsyncSession, services: Services, notifier_id: str, data: NotifierUpdate) -> NotifierOut:
        """Update a notifier.

        Name, configuration, `disabled_until` (`null` enables it now) and `send_resolved`. Needs `notifiers:write`; a
        dataset-limited token changes none."""
        return await service.update_notifier(db, services.notifier_env, notifier_id, data)

    @delete("/{notifier_id:str}", status_code=204, opt=WRITE)
    async def remove(self, db: AsyncSession, notifier_id: str) -> None:
        """Delete a notifier.

        409 while the routing document sends to it. Needs `notifiers:write`."""
        await service.delete_notifier(db, notifier_id)

    @post("/{notifier_id:str}/rotate-secret", status_code=200, opt=WRITE)
    async def rotate_secret(self, db: AsyncSession, services: Services, notifier_id: str) -> NotifierWithSecret:
        """Rotate a webhook notifier's signing secret.

        The new secret is in the body, once; the previous one keeps signing for 24 hours. Needs `notifiers:write`."""
        return await service.rotate_secret(db, services.notifier_env, notifier_id)

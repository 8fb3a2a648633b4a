from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, patch
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.auth import principal
from app.datasets import service
from app.datasets.schemas import DatasetDetail, DatasetOut, DatasetPatch, FieldOut
from app.pagination import CursorCodec, Limit, ListEnvelope


class DatasetController(Controller):
    path = "/v1/datasets"
    tags = ["datasets"]

    @get("/", opt=requires("datasets:read"))
    async def list(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[DatasetOut]:
        """List datasets.

        A dataset is created by its first ingest. Needs `datasets:read`."""
        return await service.list_datasets(db, codec, principal(request), limit=limit, cursor=cursor)

    @get("/{name:str}", opt=requires("datasets:read"))
    async def retrieve(self, request: Request[Any, Any, Any], db: AsyncSession, name: str) -> DatasetDetail:
        """Retrieve a dataset.

        With its field count, an estimate of its events and the time span they cover. Needs `datasets:read`."""
        return await service.dataset_detail(db, await service.get_dataset(db, name, principal(request)))

    @get("/{name:str}/fields", opt=requires("datasets:read"))
    async def fields(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        name: str,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[FieldOut]:
        """List a dataset's fields.

        Each field with the JSON types seen in it and when it first appeared. Needs `datasets:read`."""
        ds = await service.get_dataset(db, name, principal(request))
        return await service.list_fields(db, codec, ds, limit=limit, cursor=cursor)

    @patch("/{name:str}", opt=requires("datasets:write"))
    async def update(
        self, request: Request[Any, Any, Any], db: AsyncSession, name: str, data: DatasetPatch
    ) -> DatasetDetail:
        """Update a dataset's description or retention.

        `retention_days`: events older than that are dropped (`null`: kept). Needs `datasets:write`."""
        ds = await service.get_dataset(db, name, principal(request), hold="shared")
        return await service.update_dataset(db, ds, data)

    @delete("/{name:str}", status_code=204, opt=requires("datasets:write"))
    async def remove(self, request: Request[Any, Any, Any], db: AsyncSession, name: str) -> None:
        """Delete a dataset and all its events.

        Needs `datasets:write`."""
        ds = await service.get_dataset(db, name, principal(request), hold="exclusive")
        await service.delete_dataset(db, ds)

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.params import Parameter, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.annotations import service
from app.annotations.schemas import AnnotationCreate, AnnotationOut, AnnotationUpdate
from app.auth import principal
from app.pagination import CursorCodec, Limit, ListEnvelope
from app.routing.matchers import check_matchers
from app.timeparams import parse_time_param

READ = requires("annotations:read")
WRITE = requires("annotations:write")


class AnnotationController(Controller):
    path = "/v1/annotations"
    tags = ["annotations"]

    @post("/", status_code=201, opt=WRITE)
    async def create(self, request: Request[Any, Any, Any], data: AnnotationCreate, db: AsyncSession) -> AnnotationOut:
        """Create an annotation (a deploy, an incident, a change).

        `datasets` names the charts it is drawn on (`["*"]`: every chart); `silence` holds a silence over its span.
        Needs `annotations:write`."""
        return await service.create_annotation(db, principal(request), data)

    @get("/", opt=READ)
    async def list(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        datasets: Annotated[
            list[str] | None,
            Parameter(
                description="Dataset names, comma-separated or repeated: any of them (and the environment-wide "
                "annotations, on every chart); `*`: only the environment-wide ones."
            ),
        ] = None,
        start_time: Annotated[
            str | None,
            Parameter(description="RFC 3339 or relative to now (`now-3h`); annotations overlapping [start, end]."),
        ] = None,
        end_time: Annotated[str | None, Parameter(description="RFC 3339 or relative to now (`now`).")] = None,
        type_: Annotated[str | None, QueryParameter(name="type", description="Only this type.")] = None,
        filters: Annotated[
            list[str] | None,
            QueryParameter(name="filter", description='A label matcher such as service="checkout"; all must hold.'),
        ] = None,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[AnnotationOut]:
        """List annotations.

        Those overlapping the time range, newest first, filtered by datasets, type and label matchers. Needs
        `annotations:read`."""
        return await service.list_annotations(
            db,
            codec,
            principal(request),
            datasets=datasets,
            start_time=parse_time_param(start_time, "start_time"),
            end_time=parse_time_param(end_time, "end_time"),
            type_=type_,
            limit=limit,
            cursor=cursor,
            range_as_given=(start_time, end_time),
            matchers=check_matchers(list(filters or ()), "filter", code="invalid_parameter"),
        )

    @get("/{annotation_id:str}", opt=READ)
    async def retrieve(self, request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str) -> AnnotationOut:
        """Retrieve an annotation.

        Needs `annotations:read`; a dataset-limited token sees those of its datasets only."""
        return service.to_out(await service.get_annotation(db, principal(request), annotation_id))

    @patch("/{annotation_id:str}", opt=WRITE)
    async def update(
        self, request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str, data: AnnotationUpdate
    ) -> AnnotationOut:
        """Update an annotation.

        Partial: absent fields stay as they are; `null` clears an optional one. Needs `annotations:write`."""
        return await service.update_annotation(db, principal(request), annotation_id, data)

    @delete("/{annotation_id:str}", status_code=204, opt=WRITE)
    async def remove(self, request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str) -> None:
        """Delete an annotation.

        The silence it held ends with it. Needs `annotations:write`."""
        await service.delete_annotation(db, principal(request), annotation_id)

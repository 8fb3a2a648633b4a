from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, post
from litestar.background_tasks import BackgroundTask
from litestar.response import Stream

from app.access import requires
from app.auth import principal
from app.disconnect import unless_disconnected
from app.query import bounds, service
from app.query.schemas import ExportRequest, QueryRequest, QueryResult
from app.services import Services


class QueryController(Controller):
    path = "/v1"
    tags = ["query"]
    opt = requires("query")

    # Read-only: the token is checked beside the query instead of before it (app/known_tokens.py).
    @post("/query", status_code=200, opt={"token_check": "beside"}, operation_id="runQuery")
    async def query(self, request: Request[Any, Any, Any], services: Services, data: QueryRequest) -> QueryResult:
        """Run a query.

        `apl` is a pipeline in the Kusto-style query language (docs/query-language.md) over one dataset; the result's
        rows are bounded (`take`, and the server's limits, said in `warnings`). Needs `query`."""
        who = principal(request)
        slots = services.query_slots

        async def work() -> QueryResult:
            async with slots.hold(who.token_id):  # a turn among the token's queries (app/query/slots.py)
                return await service.run_query(services.query_pool, services.settings, who, data)

        with services.metrics.timed_query("query"):
            result = await unless_disconnected(request.receive, work())
        body = await bounds.encoded(result)  # a big one off the event loop
        if body is not None:
            return Response(body, media_type="application/json")  # type: ignore[return-value]
        return result

    @post("/export", status_code=200, media_type="application/x-ndjson", operation_id="exportQuery")
    async def export(self, request: Request[Any, Any, Any], services: Services, data: ExportRequest) -> Stream:
        """Export every row of a query, streamed as NDJSON.

        One JSON object per line, as the rows are read (memory stays flat), no row cap unless the query has one;
        `Accept-Encoding: gzip` compresses the stream. Needs `query`."""
        who = principal(request)
        slots = services.query_slots

        async def work() -> service.Export:
            await slots.acquire(who.token_id)  # held until the stream has ended (`finish`)
            try:
                return await service.start_export(
                    services.query_pool, services.settings, who, data, request.headers.get("accept-encoding", "")
                )
            except BaseException:
                slots.release(who.token_id)
                raise

        with services.metrics.timed_query("export"):
            export = await unless_disconnected(request.receive, work())

        async def finish() -> None:
            try:
                await export.close()
            finally:
                slots.release(who.token_id)

        return Stream(
            export.body,
            media_type="application/x-ndjson",
            headers=export.headers,
            background=BackgroundTask(finish),
        )

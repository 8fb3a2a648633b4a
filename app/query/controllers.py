from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post
from litestar.background_tasks import BackgroundTask
from litestar.response import Stream

from app.auth import principal
from app.query import service
from app.query.disconnect import unless_disconnected
from app.query.schemas import ExportRequest, QueryRequest, QueryResult


class QueryController(Controller):
    path = "/v1"
    tags = ["query"]
    opt = {"scope": "query"}

    # Read-only: the token is checked beside the query instead of before it (app/known_tokens.py).
    @post("/query", status_code=200, opt={"token_check": "beside"})
    async def query(self, request: Request[Any, Any, Any], data: QueryRequest) -> QueryResult:
        state = request.app.state
        work = service.run_query(state.query_pool, state.settings, principal(request), data)
        with state.metrics.timed_query("query"):
            return await unless_disconnected(request.receive, work)

    @post("/export", status_code=200, media_type="application/x-ndjson")
    async def export(self, request: Request[Any, Any, Any], data: ExportRequest) -> Stream:
        state = request.app.state
        work = service.start_export(
            state.query_pool, state.settings, principal(request), data, request.headers.get("accept-encoding", "")
        )
        with state.metrics.timed_query("export"):
            export = await unless_disconnected(request.receive, work)
        return Stream(
            export.body,
            media_type="application/x-ndjson",
            headers=export.headers,
            background=BackgroundTask(export.close),
        )

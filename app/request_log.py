"""Every HTTP request, once: counted and timed for `/metrics` and written as one access-log line with its id.

`observe(app)` wraps the app's ASGI handler (outside routing, so unknown paths and refusals by the auth
middleware count too). The request id is set in a context variable for the request's whole task, so every
log line written while it is handled carries it (`app/logs.py`).
"""

from __future__ import annotations

import logging
import time

from litestar import Litestar
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from app.logs import current_request_id
from app.request_ids import request_id_for
from app.services import services_of

access_log = logging.getLogger("beacon.access")

# A route label for requests no route matched: their paths are whatever a client typed (unbounded, and may
# name a dataset), so they share one label.
UNMATCHED = "unmatched"


def observe(app: Litestar) -> None:
    app.asgi_handler = _observed(app.asgi_handler)


def _observed(handler: ASGIApp) -> ASGIApp:
    async def observed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await handler(scope, receive, send)
            return
        started = time.perf_counter()
        token = current_request_id.set(request_id_for(scope))
        status = 500  # what the server answers when the handler raises past every exception handler
        recorded = False

        async def sending(message: Message) -> None:
            nonlocal status, recorded
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                recorded = True
                _record(scope, status, time.perf_counter() - started)

        try:
            await handler(scope, receive, sending)
        finally:
            if not recorded:  # it raised, or the client went away mid-answer: counted all the same
                _record(scope, status, time.perf_counter() - started)
            current_request_id.reset(token)

    return observed


def _record(scope: Scope, status: int, seconds: float) -> None:
    method = scope.get("method", "")
    route = scope.get("path_template") or UNMATCHED
    metrics = services_of(scope["app"]).metrics
    metrics.http_requests.labels(method, route, str(status)).inc()
    metrics.http_duration.labels(method, route).observe(seconds)
    if access_log.isEnabledFor(logging.INFO):
        path = scope.get("path", "")  # decoded; the log's formatters escape what it may hold (app/logs.py)
        access_log.info(
            "%s %s %d %.1f ms",
            method,
            path,
            status,
            seconds * 1000,
            extra={
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(seconds * 1000, 1),
            },
        )

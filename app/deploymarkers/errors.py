"""Errors in each deploy tool's own shape: a tool treats an answer it does not expect as a failure (Argo CD's
Grafana service: any status but 200), and shows the body it gets. Every error of these routes, the token's
included (app/auth.py), leaves in the tool's shape with Beacon's message; the status is Beacon's, except where
the real service answers another (PagerDuty's Events API: a bad routing key is a 400)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException

from app.db.unavailable import database_unavailable
from app.errors import BeaconError
from app.http_errors import from_http
from app.request_ids import request_id_for

log = logging.getLogger("beacon.deploymarkers")

Shape = Callable[[BeaconError], tuple[int, dict[str, Any]]]


def grafana_shape(exc: BeaconError) -> tuple[int, dict[str, Any]]:
    """Grafana: `{"message": …}`."""
    return exc.status, {"message": exc.message}


def honeycomb_shape(exc: BeaconError) -> tuple[int, dict[str, Any]]:
    """Honeycomb: `{"error": …}`."""
    return exc.status, {"error": exc.message}


def pagerduty_shape(exc: BeaconError) -> tuple[int, dict[str, Any]]:
    """PagerDuty's Events API: an event it refuses, a bad routing key included, is a 400 "invalid event"; too many
    is a 429 "throttle event"."""
    if exc.code == "rate_limit_exceeded":
        return 429, {"status": "throttle event", "message": exc.message}
    if exc.status >= 500:
        return exc.status, {"status": "error", "message": exc.message}
    return 400, {"status": "invalid event", "message": "Event object is invalid", "errors": [exc.message]}


def exception_handlers(shape: Shape) -> dict[Any, Any]:
    def respond(request: Request[Any, Any, Any], exc: BeaconError) -> Response[Any]:
        status, body = shape(exc)
        return Response(content=body, status_code=status, media_type="application/json", headers=exc.headers)

    def beacon(request: Request[Any, Any, Any], exc: BeaconError) -> Response[Any]:
        return respond(request, exc)

    def http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
        return respond(request, from_http(exc))

    def unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        if database_unavailable(exc):
            error = BeaconError("service_unavailable", "The database is unreachable.", headers={"Retry-After": "5"})
            return respond(request, error)
        log.exception("unhandled error (request %s)", request_id_for(request.scope), exc_info=exc)
        return respond(request, BeaconError("internal_error", "Internal server error."))

    return {BeaconError: beacon, HTTPException: http, Exception: unexpected}

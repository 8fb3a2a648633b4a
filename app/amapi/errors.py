"""Errors at /api/v2 in Alertmanager's shape: the body of a 400 or 404 is a JSON string, the message itself,
which Alertmanager's clients (amtool, Prometheus) print as it is. What only Beacon refuses (no or a bad
token, a missing scope, the rate limit, the database away) keeps Beacon's status and error envelope."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException

from app.amapi.translate import json_string
from app.errors import BeaconError
from app.http_errors import from_http, render

ENVELOPED = {401, 403, 429, 503}


class ClientContractError(Exception):
    """An answer whose status Alertmanager's API fixes, where it differs from Beacon's usual one."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _handle_contract(request: Request[Any, Any, Any], exc: ClientContractError) -> Response[Any]:
    return Response(content=json_string(exc.message), status_code=exc.status, media_type="application/json")


def _handle_beacon(request: Request[Any, Any, Any], exc: BeaconError) -> Response[Any]:
    if exc.status in ENVELOPED:
        return render(request, exc)
    message = f"{exc.message} ({exc.param})" if exc.param and exc.param not in exc.message else exc.message
    return Response(
        content=json_string(message), status_code=exc.status, media_type="application/json", headers=exc.headers
    )


def _handle_http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    return _handle_beacon(request, from_http(exc))


def exception_handlers() -> dict[Any, Any]:
    return {BeaconError: _handle_beacon, HTTPException: _handle_http, ClientContractError: _handle_contract}

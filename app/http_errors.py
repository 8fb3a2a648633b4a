"""The one exception -> response mapping: every error the app can produce, including Litestar's own
404/405/validation/500, leaves through `exception_handlers()` as the envelope of app/errors.py's catalogue.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import (
    ClientException,
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    SerializationException,
    ValidationException,
)

from app.db.unavailable import database_unavailable
from app.error_shapes import shape_for
from app.errors import BeaconError, error_body
from app.request_ids import request_id_for
from app.services import services_or_none

log = logging.getLogger("beacon.errors")


def render(request: Request[Any, Any, Any], exc: BeaconError) -> Response[Any]:
    rid = request_id_for(request.scope)
    # Before the lifespan has built the services (nothing is answered then, but an error handler must not fail).
    services = services_or_none(request.app)
    shape = shape_for(services.error_shapes, request.scope.get("path", "")) if services is not None else None
    if shape is not None:
        return shape(request, exc, rid)
    docs_url = services.settings.effective_docs_url if services is not None else "/docs"
    body = error_body(exc.code, exc.message, rid, docs_url, exc.param)
    return Response(
        content=msgspec.json.encode(body),
        status_code=exc.status,
        media_type="application/json",
        headers=exc.headers,
    )


_FIELD_IN_MESSAGE = re.compile(r"field `([^`]+)`")
_FIELD_FIRST = re.compile(r"`([^`]+)`")


def from_validation(exc: ValidationException) -> BeaconError:
    """Map Litestar's msgspec validation failure to missing_field / invalid_field / invalid_parameter."""
    extra = exc.extra if isinstance(exc.extra, list) and exc.extra else [{}]
    first = extra[0] if isinstance(extra[0], dict) else {}
    message = str(first.get("message") or exc.detail)
    key = str(first.get("key") or "")
    source = first.get("source")
    if source in {"query", "path", "header", "cookie"}:
        return BeaconError("invalid_parameter", f"Invalid parameter `{key}`: {message}.", param=key or None)
    # Litestar names the whole body "data"; msgspec names the field inside the message.
    prefix = "" if key in {"", "data"} else key.replace("[...]", "") + "."
    named = _FIELD_IN_MESSAGE.search(message)
    if message.startswith("Object missing required field") and named:
        param = prefix + named.group(1)
        return BeaconError("missing_field", f"Missing required field `{param}`.", param=param)
    if message.startswith("Object contains unknown field") and named:
        param = prefix + named.group(1)
        return BeaconError("invalid_field", f"Unknown field `{param}`.", param=param)
    named = _FIELD_FIRST.match(message)  # a Struct's own check (`__post_init__`) names the field first
    if named:
        param = prefix + named.group(1)
        return BeaconError("invalid_field", f"{message.replace(named.group(0), f'`{param}`', 1)}.", param=param)
    if key == "data":
        return BeaconError("invalid_json", "The request body must be a JSON object.")
    param = key.replace("[...]", "")
    return BeaconError("invalid_field", f"Invalid value for `{param}`: {message}.", param=param or None)


def from_http(exc: HTTPException) -> BeaconError:
    if isinstance(exc, NotFoundException):
        return BeaconError("not_found", "No such route.")
    if isinstance(exc, MethodNotAllowedException):
        # RFC 9110: a 405 lists the methods the route takes (Litestar's router puts them in `allow`).
        allow = (exc.headers or {}).get("allow")
        return BeaconError(
            "method_not_allowed", "This route does not accept that method.", headers={"Allow": allow} if allow else None
        )
    if isinstance(exc, ValidationException):
        return from_validation(exc)
    # Litestar re-raises a body its decoder refused (malformed, a number out of range) as a 400 ClientException.
    decoding = isinstance(exc.__cause__, SerializationException) or "JSON" in str(exc.detail)
    if exc.status_code == 400 and isinstance(exc, ClientException) and decoding:
        return BeaconError("invalid_json", f"The request body is not valid JSON: {exc.detail}.")
    if exc.status_code == 413:
        return BeaconError("payload_too_large", str(exc.detail))
    if exc.status_code == 415:
        return BeaconError("unsupported_media_type", str(exc.detail))
    if exc.status_code >= 500:
        return BeaconError("internal_error", "Internal server error.")
    return BeaconError("invalid_parameter", str(exc.detail))


def _handle_beacon(request: Request[Any, Any, Any], exc: BeaconError) -> Response[Any]:
    return render(request, exc)


def _handle_http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    return render(request, from_http(exc))


def _handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if database_unavailable(exc):
        log.warning("database unavailable: %s (request %s)", type(exc).__name__, request_id_for(request.scope))
        return render(
            request,
            BeaconError("service_unavailable", "The database is unreachable.", headers={"Retry-After": "5"}),
        )
    log.exception("unhandled error (request %s)", request_id_for(request.scope), exc_info=exc)
    return render(request, BeaconError("internal_error", "Internal server error."))


def exception_handlers() -> dict[Any, Any]:
    return {
        BeaconError: _handle_beacon,
        HTTPException: _handle_http,
        Exception: _handle_unexpected,  # a database outage is a 503 (database_unavailable), anything else a 500
    }


def response_for(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The response `exception_handlers()` gives `exc`, for code that must answer with it itself."""
    handlers = exception_handlers()
    handler = next((handlers[cls] for cls in type(exc).__mro__ if cls in handlers), _handle_unexpected)
    response: Response[Any] = handler(request, exc)
    return response

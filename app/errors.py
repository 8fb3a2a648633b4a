"""Error codes, the error envelope and the one exception -> response mapping.

Every error the app can produce, including Litestar's own 404/405/validation/500, leaves through
`exception_handlers()` as `{"error": {type, code, message, doc_url, request_id, param?}}`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import asyncpg
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
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from app.request_ids import request_id_for

log = logging.getLogger("beacon.errors")


@dataclass(frozen=True)
class ErrorKind:
    status: int
    type: str
    description: str


ERRORS: dict[str, ErrorKind] = {
    "invalid_json": ErrorKind(400, "invalid_request_error", "The request body is not valid JSON."),
    "missing_field": ErrorKind(400, "invalid_request_error", "A required body field is absent; `param` names it."),
    "invalid_field": ErrorKind(
        400, "invalid_request_error", "A body field is unknown or has a wrong value; `param` names it."
    ),
    "invalid_parameter": ErrorKind(
        400, "invalid_request_error", "A query-string or path parameter is wrong; `param` names it."
    ),
    "invalid_cursor": ErrorKind(
        400, "invalid_request_error", "The `cursor` was altered, has expired, or belongs to another list."
    ),
    "too_many_events": ErrorKind(
        400,
        "invalid_request_error",
        "An ingest body holds more than 10,000 events (JSON array) or 100,000 lines (NDJSON); nothing was stored.",
    ),
    "invalid_body": ErrorKind(
        400,
        "invalid_request_error",
        "The body cannot be decoded as its Content-Encoding says (for example corrupt or truncated gzip); "
        "nothing was stored.",
    ),
    "invalid_query": ErrorKind(
        400,
        "invalid_request_error",
        "The query text does not parse or type-check; the message gives line and column.",
    ),
    # 409, not 400: the request is well formed and would succeed on another resource; it is refused for what the
    # resource is (its type), which is a conflict with the resource's state (RFC 9110 15.5.10).
    "unsupported_operation": ErrorKind(
        409,
        "invalid_request_error",
        "The resource does not support this operation (e.g. rotating the secret of a notifier type without one).",
    ),
    "invalid_yaml": ErrorKind(
        400,
        "invalid_request_error",
        "The body is not YAML that can be read (or is too large once its aliases are expanded); the message gives "
        "line and column.",
    ),
    "query_timeout": ErrorKind(400, "invalid_request_error", "The query ran longer than the statement timeout."),
    "missing_token": ErrorKind(401, "authentication_error", "No API token was provided."),
    "invalid_token": ErrorKind(401, "authentication_error", "The API token is unknown, revoked or expired."),
    "insufficient_scope": ErrorKind(
        403, "permission_error", "The token lacks the scope (or dataset) this request needs."
    ),
    "not_found": ErrorKind(404, "invalid_request_error", "No such route or resource."),
    "method_not_allowed": ErrorKind(405, "invalid_request_error", "The route exists but not for this method."),
    "request_timeout": ErrorKind(
        408,
        "invalid_request_error",
        "The request body stopped arriving (no data for the idle timeout) or took longer than the body timeout in "
        "all; nothing was done and the connection is closed.",
    ),
    "client_closed_request": ErrorKind(
        499,
        "invalid_request_error",
        "The client closed the connection before its request body was complete; nothing was done. (A status only"
        " the access log and metrics see, as nginx's 499: there is no one left to answer.)",
    ),
    "conflict": ErrorKind(409, "invalid_request_error", "The request conflicts with the resource's current state."),
    "losses_not_accepted": ErrorKind(
        409,
        "invalid_request_error",
        "The imported configuration holds parts Beacon cannot honour (the message lists them); nothing was changed. "
        "Send it again with `accept_losses=true` to import the rest.",
    ),
    "version_conflict": ErrorKind(
        412, "invalid_request_error", "`If-Match` names a version that is no longer current: read it again and retry."
    ),
    "precondition_required": ErrorKind(
        428, "invalid_request_error", "This write needs an `If-Match` header with the version it replaces."
    ),
    "payload_too_large": ErrorKind(
        413,
        "invalid_request_error",
        "The body is over 10 MB as sent, or over the decompressed size cap (or a JSON-array element runs past 10 MB).",
    ),
    "unsupported_media_type": ErrorKind(
        415, "invalid_request_error", "The Content-Type or Content-Encoding is not accepted."
    ),
    "rate_limit_exceeded": ErrorKind(
        429, "rate_limit_error", "Too many requests for this token; wait `Retry-After` seconds."
    ),
    "internal_error": ErrorKind(500, "api_error", "Something went wrong on our side; the request id helps us find it."),
    "template_error": ErrorKind(
        500, "api_error", "A message template failed to render; the message names the template and the line."
    ),
    "view_timeout": ErrorKind(
        503,
        "api_error",
        "A view of every alert with its silences took longer than its time limit and was stopped; narrow it.",
    ),
    "service_unavailable": ErrorKind(
        503,
        "api_error",
        "The database is unreachable, or the server holds as many request bodies as it may; retry after `Retry-After`.",
    ),
}


class ErrorDetail(msgspec.Struct, kw_only=True):
    type: str  # invalid_request_error, authentication_error, permission_error, rate_limit_error, api_error
    code: str  # one of ERRORS; each has an anchor at doc_url
    message: str
    doc_url: str
    request_id: str
    param: str | msgspec.UnsetType = msgspec.UNSET  # the field or parameter at fault, when there is one


class ErrorEnvelope(msgspec.Struct):
    """Every error response's body (the OpenAPI document's schema for them; `error_body` writes it)."""

    error: ErrorDetail


class BeaconError(Exception):
    """A domain error with a code from `ERRORS`; raised anywhere, rendered once by the handler map."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if code not in ERRORS:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param
        self.headers = headers or {}

    @property
    def status(self) -> int:
        return ERRORS[self.code].status


def check_choice(value: str, choices: Iterable[str], param: str) -> str:
    """A query-string value that must be one of a fixed set; 400 invalid_parameter naming them otherwise."""
    if value not in choices:
        raise BeaconError(
            "invalid_parameter", f"`{param}` must be one of {', '.join(choices)}; got {value!r}.", param=param
        )
    return value


def not_found(kind: str, ident: str, *, by: str = "id") -> BeaconError:
    """`by`: what `ident` is, an `id` or a `name` (a dataset is found by its name)."""
    if by == "name":
        return BeaconError("not_found", f"No {kind} named {ident!r}.")
    return BeaconError("not_found", f"No {kind} with {by} {ident!r}.")


def error_body(code: str, message: str, request_id: str, docs_url: str, param: str | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {
        "type": ERRORS[code].type,
        "code": code,
        "message": message,
        "doc_url": f"{docs_url}/errors#{code}",
        "request_id": request_id,
    }
    if param is not None:
        err["param"] = param
    return {"error": err}


def _docs_url(request: Request[Any, Any, Any]) -> str:
    settings = getattr(request.app.state, "settings", None)
    return settings.effective_docs_url if settings is not None else "/docs"


# A path that speaks another protocol (the shippers' endpoints, app/shippers/) answers its errors in that
# protocol's shape: `app.state.error_shapes` holds (path test, shape) pairs, set by create_app.
ErrorShape = Callable[[Request[Any, Any, Any], BeaconError, str], Response[Any]]


def _shape_for(request: Request[Any, Any, Any]) -> ErrorShape | None:
    shapes = request.app.state.get("error_shapes") or ()
    path = request.scope.get("path", "")
    return next((shape for applies, shape in shapes if applies(path)), None)


def render(request: Request[Any, Any, Any], exc: BeaconError) -> Response[Any]:
    rid = request_id_for(request.scope)
    shape = _shape_for(request)
    if shape is not None:
        return shape(request, exc, rid)
    body = error_body(exc.code, exc.message, rid, _docs_url(request), exc.param)
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


# Failures of the connection to PostgreSQL, not of a statement: the server is down, starting up or shutting
# down, refuses more connections, or dropped ours. asyncpg raises them raw on the read pool and in COPY;
# SQLAlchemy wraps them (`DBAPIError.orig`, whose `__cause__` is asyncpg's exception).
_CONNECTION_FAILURES: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,  # class 08: the connection does not exist, failed, was rejected
    asyncpg.CannotConnectNowError,  # 57P03: starting up, shutting down, in recovery
    asyncpg.AdminShutdownError,  # 57P01: terminated (shutdown, pg_terminate_backend)
    asyncpg.CrashShutdownError,  # 57P02
    asyncpg.DatabaseDroppedError,  # 57P04
    asyncpg.IdleSessionTimeoutError,  # 57P05
    asyncpg.TooManyConnectionsError,  # 53300
    asyncpg.InternalClientError,  # the protocol's state after its connection broke mid-operation
    OSError,  # refused, reset, unreachable, a connect timeout (TimeoutError is an OSError)
    OperationalError,
    PoolTimeoutError,
)


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` is, or was caused by, a connection-level database failure (a 503, not a 500)."""
    todo: list[BaseException] = [exc]
    seen: set[int] = set()
    while todo:
        err = todo.pop()
        if id(err) in seen:
            continue
        seen.add(id(err))
        if isinstance(err, _CONNECTION_FAILURES) or (isinstance(err, DBAPIError) and err.connection_invalidated):
            return True
        if isinstance(err, BaseExceptionGroup):
            todo.extend(err.exceptions)
        todo.extend(e for e in (getattr(err, "orig", None), err.__cause__) if isinstance(e, BaseException))
    return False


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

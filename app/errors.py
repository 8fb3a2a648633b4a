"""Error codes, the error envelope and the one exception -> response mapping.

Every error the app can produce, including Litestar's own 404/405/validation/500, leaves through
`exception_handlers()` as `{"error": {type, code, message, doc_url, request_id, param?}}`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec


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
    """A domain error with a code from `ERRORS`; raised anywhere, rendered once by the handler map
    (app/http_errors.py)."""

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

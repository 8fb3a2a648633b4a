"""Elasticsearch's answers: JSON bodies, `X-Elastic-Product: Elasticsearch` on every answer (Elastic's clients
refuse a server without it), the content type a client asked for, and errors in Elasticsearch's shape:
`{"error": {"root_cause": [{type, reason}], type, reason}, "status": N}`."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response

from app.errors import BeaconError
from app.shippers.shapes import shipper_status

PRODUCT = {"X-Elastic-Product": "Elasticsearch"}
_JSON = "application/json; charset=UTF-8"
_COMPATIBLE = "application/vnd.elasticsearch+json;compatible-with=8"

# Elasticsearch's error type for each of Beacon's codes (an ElasticError names its own).
_TYPES = {
    "missing_token": "security_exception",
    "invalid_token": "security_exception",
    "insufficient_scope": "security_exception",
    "rate_limit_exceeded": "es_rejected_execution_exception",
    "payload_too_large": "content_too_long_exception",
    "unsupported_media_type": "media_type_header_exception",
    "not_found": "resource_not_found_exception",
    "invalid_json": "parse_exception",
    "invalid_body": "parse_exception",
    "service_unavailable": "unavailable_shards_exception",
    "conflict": "unavailable_shards_exception",
}


class ElasticError(BeaconError):
    """A Beacon error that names its Elasticsearch error type."""

    def __init__(self, code: str, message: str, *, es_type: str) -> None:
        super().__init__(code, message)
        self.es_type = es_type


def media_type(request: Request[Any, Any, Any]) -> str:
    """Elastic's clients ask for the compatible-with=8 media type; they get it back, the others plain JSON."""
    accept = request.headers.get("accept", "")
    return _COMPATIBLE if "compatible-with=8" in accept.replace(" ", "") else _JSON


def answer(request: Request[Any, Any, Any], body: Any, status: int = 200) -> Response[bytes]:
    content = body if isinstance(body, bytes) else msgspec.json.encode(body)
    return Response(content, status_code=status, media_type=media_type(request), headers=PRODUCT)


def empty(status: int) -> Response[None]:
    """An answer to HEAD: the status alone."""
    return Response(None, status_code=status, headers=PRODUCT)


def error_body(es_type: str, reason: str, status: int) -> dict[str, Any]:
    cause = {"type": es_type, "reason": reason}
    return {"error": {"root_cause": [cause], **cause}, "status": status}


def render_error(request: Request[Any, Any, Any], exc: BeaconError, request_id: str) -> Response[bytes]:
    status, headers = shipper_status(exc)
    headers.update(PRODUCT)
    if status == 401:
        headers["WWW-Authenticate"] = 'Basic realm="beacon", ApiKey'
    if request.method == "HEAD":
        return Response(b"", status_code=status, headers=headers)
    es_type = exc.es_type if isinstance(exc, ElasticError) else _TYPES.get(exc.code, "illegal_argument_exception")
    body = error_body(es_type, f"{exc.message} (request {request_id})", status)
    return Response(msgspec.json.encode(body), status_code=status, media_type=media_type(request), headers=headers)

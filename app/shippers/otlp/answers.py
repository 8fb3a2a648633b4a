"""OTLP/HTTP's answers: `ExportLogsServiceResponse` on success, `google.rpc.Status` on failure, each in the
request's encoding (protobuf or JSON), with the statuses OTLP's retry rules read: 429 and 503 (with
`Retry-After`) are retried by exporters, 400/401/403/413/415 are not."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc.status_pb2 import Status
from litestar import Request, Response
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

from app.errors import BeaconError
from app.shippers.shapes import shipper_status

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_PROTOBUF_TYPES = {PROTOBUF, "application/protobuf"}

# The gRPC code that goes with each HTTP status in a Status body (OTLP/HTTP reuses gRPC's Status message).
_GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8, 500: 13, 503: 14}


def _media(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def encoding_of(content_type: str | None) -> str:
    """PROTOBUF or JSON; anything else is a 415."""
    media = _media(content_type)
    if media in _PROTOBUF_TYPES:
        return PROTOBUF
    if media == JSON:
        return JSON
    shown = f"`{media}`" if media else "no Content-Type"
    raise BeaconError(
        "unsupported_media_type",
        f"OTLP/HTTP logs are `application/x-protobuf` or `application/json`, not {shown}.",
    )


def _encode(message: Message, encoding: str) -> bytes:
    if encoding == JSON:
        return json_format.MessageToJson(message, indent=None).encode()
    return message.SerializeToString()


def accepted(encoding: str, rejected: int, errors: list[str], warnings: list[str]) -> Response[bytes]:
    """200: everything stored, or a partial success naming how many records were rejected and why (and, with none
    rejected, the warnings: OTLP's partial success carries them so)."""
    answer = ExportLogsServiceResponse()
    if rejected:
        shown = "; ".join(errors) if errors else "malformed log records"
        answer.partial_success.rejected_log_records = rejected
        answer.partial_success.error_message = "; ".join([f"{rejected} log record(s) rejected: {shown}", *warnings])
    elif warnings:
        answer.partial_success.error_message = "; ".join(warnings)
    return Response(_encode(answer, encoding), status_code=200, media_type=encoding)


def render_error(request: Request[Any, Any, Any], exc: BeaconError, request_id: str) -> Response[bytes]:
    status, headers = shipper_status(exc)
    media = _media(request.headers.get("content-type"))
    encoding = JSON if media == JSON else PROTOBUF
    body = Status(code=_GRPC_CODES.get(status, 2), message=f"{exc.message} (request {request_id})")
    return Response(_encode(body, encoding), status_code=status, media_type=encoding, headers=headers)

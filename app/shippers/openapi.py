"""The OpenAPI description of the shippers' operations: written by hand, since they read raw bodies and answer,
errors included, in their protocol's shapes and media types (which app/openapi.py's Beacon envelope is not)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, RequestBody, Schema

BINARY = Schema(type=OpenAPIType.STRING, format="binary")  # type: ignore[arg-type]
TEXT = Schema(type=OpenAPIType.STRING)
OBJECT = Schema(type=OpenAPIType.OBJECT)
# The statuses every /v1 route may answer (app/openapi.py EVERY_ROUTE), and those of a body read whole.
EVERY_ROUTE = (400, 401, 403, 429, 503)
BODY = (413, 415)


def content(media: dict[str, Schema]) -> dict[str, OpenAPIMediaType]:
    return {name: OpenAPIMediaType(schema=schema) for name, schema in media.items()}


def operation_class(
    *,
    responses: dict[int, tuple[str, dict[str, Schema]]],
    body: tuple[str, dict[str, Schema]] | None = None,
) -> type[Operation]:
    """An Operation whose request body and responses are the ones given (status: description, media -> schema);
    an empty media dict is a response without a body."""

    @dataclass
    class _Described(Operation):
        def __post_init__(self) -> None:
            if body is not None:
                self.request_body = RequestBody(required=True, description=body[0], content=content(body[1]))
            self.responses = {
                str(status): OpenAPIResponse(description=text, content=content(media) if media else None)
                for status, (text, media) in sorted(responses.items())
            }

    return _Described


def errors(description: str, media: dict[str, Schema], statuses: tuple[int, ...]) -> dict[int, Any]:
    return {status: (description, media) for status in statuses}

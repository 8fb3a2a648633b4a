"""Loki's answers: 204 with no body when every entry was stored; otherwise plain text naming what was not, as
Loki's distributor writes it (a 400 after a partial push still means the other entries were stored: Loki's
clients drop a batch on a 400 and retry it on 429 and 5xx)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from app.errors import BeaconError
from app.shippers.shapes import shipper_status

TEXT = "text/plain; charset=utf-8"


def pushed(rejected: int, errors: list[str]) -> Response[bytes]:
    if not rejected:
        return Response(b"", status_code=204)
    lines = [f"{rejected} entries were not stored (the others were):", *errors]
    return Response(("\n".join(lines) + "\n").encode(), status_code=400, media_type=TEXT)


def render_error(request: Request[Any, Any, Any], exc: BeaconError, request_id: str) -> Response[bytes]:
    status, headers = shipper_status(exc)
    return Response(
        f"{exc.message} (request {request_id})\n".encode(), status_code=status, media_type=TEXT, headers=headers
    )

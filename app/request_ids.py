"""Request ids: `req_` + hex, one per request, on every response as `X-Request-Id`."""

from __future__ import annotations

import secrets
from typing import Any

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope


def new_id(prefix: str, nbytes: int = 12) -> str:
    """A resource or request id: prefix + lowercase hex."""
    return f"{prefix}{secrets.token_hex(nbytes)}"


def request_id_for(scope: Scope | dict[str, Any]) -> str:
    """The request's id, created on first use so error handlers and headers always agree."""
    state = scope.setdefault("state", {})
    rid = state.get("request_id")
    if rid is None:
        rid = state["request_id"] = new_id("req_")
    return str(rid)


async def add_response_headers(message: Message, scope: Scope) -> None:
    """`before_send` hook: runs for every response, including the router's own 404/405."""
    if message["type"] != "http.response.start":
        return
    headers = MutableScopeHeaders.from_message(message)
    headers["X-Request-Id"] = request_id_for(scope)
    for name, value in scope.get("state", {}).get("extra_headers", {}).items():
        headers[name] = value

"""`Allow` on OPTIONS answers: every method the path takes.

Litestar answers OPTIONS with the `Allow` of one handler's route, so a path served by several handlers (a
controller's GET and POST on one path) advertised one method besides OPTIONS. RFC 9110 and the OpenAPI document
(checked by schemathesis) want them all; the 405 answer already lists them all (app/http_errors.py).
"""

from __future__ import annotations

import re
from typing import Any

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

_TYPED = re.compile(r"\{(\w+):\w+\}")


def _methods_by_path(app: Any) -> dict[str, list[str]]:
    """Path template (`/v1/annotations/{annotation_id}`) -> methods: made per OPTIONS request, which are few, so
    that the app holds no state of its own beside `Services` (app/services.py)."""
    return {_TYPED.sub(r"{\1}", path): list(m) for path, m in app.route_handler_method_map.items()}


async def complete_allow(message: Message, scope: Scope) -> None:
    """`before_send` hook: an OPTIONS answer's `Allow` lists the methods of every handler of its path."""
    if message["type"] != "http.response.start" or scope.get("method") != "OPTIONS":
        return
    headers = MutableScopeHeaders.from_message(message)
    template = scope.get("path_template")
    methods = _methods_by_path(scope["app"]).get(_TYPED.sub(r"{\1}", template)) if template else None
    if "allow" in headers and methods:
        headers["Allow"] = ", ".join(sorted(methods))

"""The console's guard: a page declares what it needs as the API's routes do (`opt=requires(...)`, app/access.py)
and opens only for a signed-in token that meets it; checked by the same `admit` as the API, before the page's
work. A page that declares nothing (the sign-in pages, the static files) is not guarded here."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from app.access import REQUIREMENT, admit
from app.ui.session import signed_in


async def console_guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    if REQUIREMENT in handler.opt:
        admit(await signed_in(connection), handler.opt)

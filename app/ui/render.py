"""Rendering console pages: the layout's context (navigation, CSRF token), error pages, server timing."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import ValidationException

from app.errors import BeaconError
from app.http_errors import from_validation
from app.services import services_of
from app.templating import render_template
from app.ui.nav import nav_for
from app.ui.session import csrf_token, has_session, page_principal

# Scripts and styles only from the console's own files (app/ui/static/), nothing inline, no framing by any
# site (clickjacking), forms posted only to the console itself.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def page(
    name: str,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    *,
    request: Request[Any, Any, Any] | None = None,
    **context: Any,
) -> Response[str]:
    """A console page; given the request, the layout says when the server runs in development mode."""
    dev_mode = request is not None and services_of(request.app).settings.dev_mode
    return Response(
        render_template(f"ui/{name}", dev_mode=dev_mode, **context),
        media_type=MediaType.HTML,
        status_code=status_code,
        # Pages show what a token may read: never kept by shared caches or the back-forward cache of another user.
        headers={"Cache-Control": "no-store", **SECURITY_HEADERS, **(headers or {})},
    )


def signed_page(
    request: Request[Any, Any, Any],
    name: str,
    *,
    nav: str,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    **context: Any,
) -> Response[str]:
    """A page for a signed-in user: the layout shows the navigation (the pages its token can open) and the
    sign-out form."""
    items = nav_for(page_principal(request))
    return page(
        name, status_code, headers, request=request, nav=nav, nav_items=items, csrf=csrf_token(request), **context
    )


async def signed_page_off_loop(
    request: Request[Any, Any, Any],
    name: str,
    *,
    nav: str,
    status_code: int = 200,
    **context: Any,
) -> Response[str]:
    """`signed_page` rendered on a worker thread, for a page that can be big (the alerts of an outage: 10,000
    alerts are seconds of template work, which held every other request as long)."""
    items = nav_for(page_principal(request))
    csrf = csrf_token(request)
    return await asyncio.to_thread(page, name, status_code, None, nav=nav, nav_items=items, csrf=csrf, **context)


_TITLES = {401: "Signed out", 403: "Not allowed", 404: "Not found", 409: "Conflict"}


def error_page(request: Request[Any, Any, Any], exc: BeaconError) -> Response[str]:
    """A BeaconError on a page: its message in the layout, with the error's status (never a stack trace)."""
    title = _TITLES.get(exc.status, "Something went wrong" if exc.status >= 500 else "Cannot show this page")
    context: dict[str, Any] = {"title": title, "message": exc.message, "code": exc.code}
    if has_session(request):
        return signed_page(request, "error.html", nav="", status_code=exc.status, **context)
    return page("error.html", status_code=exc.status, request=request, **context)


def validation_error_page(request: Request[Any, Any, Any], exc: ValidationException) -> Response[str]:
    return error_page(request, from_validation(exc))


class Timer:
    """Phases of a page for the `Server-Timing` header (shown by browsers' developer tools, read by the bench)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self._last = self.started
        self.phases: list[tuple[str, float]] = []

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.phases.append((name, (now - self._last) * 1000))
        self._last = now

    def add(self, phases: list[tuple[str, float]]) -> None:
        """Phases timed elsewhere (they may have overlapped); the next mark() starts after them."""
        self.phases += phases
        self._last = time.perf_counter()

    def header(self) -> dict[str, str]:
        total = (time.perf_counter() - self.started) * 1000
        parts = [f"{name};dur={ms:.1f}" for name, ms in self.phases] + [f"total;dur={total:.1f}"]
        return {"Server-Timing": ", ".join(parts)}

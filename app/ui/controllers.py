"""Routes of the console under /ui: thin handlers that gather data from the areas' services and render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request, Response, Router, get, post
from litestar.exceptions import ValidationException
from litestar.response import Redirect
from litestar.static_files import create_static_files_router
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BeaconError
from app.settings import Settings
from app.ui.forms import Form
from app.ui.render import error_page, page, validation_error_page
from app.ui.session import SignInRequired, check_csrf, check_same_origin, session_middleware, sign_in, sign_out
from app.ui.throttle import SignInThrottle, SignInThrottled

STATIC_DIR = Path(__file__).parent / "static"


@get("/login", include_in_schema=False)
async def login_form() -> Response[str]:
    return page("login.html", error=None)


@post("/login", include_in_schema=False, status_code=303)
async def login(request: Request[Any, Any, Any], db: AsyncSession, data: Form) -> Response[Any]:
    check_same_origin(request)
    state = request.app.state
    try:
        await SignInThrottle(state.rate_limiter, state.settings.rate_limits).attempt(
            request.client.host if request.client else "unknown"
        )
    except SignInThrottled as exc:
        return page("login.html", status_code=429, headers={"Retry-After": str(exc.retry_after)}, error=exc.message)
    try:
        await sign_in(request, db, data.get("token", ""))
    except BeaconError as exc:
        return page("login.html", status_code=401, error=exc.message)
    return Redirect("/ui/datasets", status_code=303)


@post("/logout", include_in_schema=False, status_code=303)
async def logout(request: Request[Any, Any, Any], db: AsyncSession, data: Form) -> Redirect:
    check_csrf(request, data.get("csrf"))
    await sign_out(request, db)
    return Redirect("/ui/login", status_code=303)


@get("/", include_in_schema=False)
async def home() -> Redirect:
    return Redirect("/ui/datasets", status_code=303)


def _to_sign_in(_: Request[Any, Any, Any], __: SignInRequired) -> Response[Any]:
    return Redirect("/ui/login", status_code=303)


def ui_router(settings: Settings, pages: list[Any]) -> Router:
    return Router(
        path="/ui",
        route_handlers=[
            login_form,
            login,
            logout,
            home,
            *pages,
            create_static_files_router(path="/static", directories=[STATIC_DIR], include_in_schema=False),
        ],
        middleware=[session_middleware(settings)],
        exception_handlers={
            SignInRequired: _to_sign_in,
            BeaconError: error_page,
            ValidationException: validation_error_page,
        },
        include_in_schema=False,
    )

"""Routes of the console under /ui: thin handlers that gather data from the areas' services and render."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from litestar import Request, Response, Router, get, post
from litestar.exceptions import ValidationException
from litestar.params import QueryParameter
from litestar.response import Redirect
from litestar.static_files import create_static_files_router
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BeaconError
from app.services import Services
from app.settings import Settings
from app.ui.forms import Form
from app.ui.guard import console_guard
from app.ui.nav import home_of, safe_next, sign_in_url
from app.ui.render import error_page, page, validation_error_page
from app.ui.session import (
    SignInRequired,
    check_csrf,
    check_same_origin,
    session_middleware,
    sign_in,
    sign_out,
    signed_in,
)
from app.ui.throttle import SignInThrottle, SignInThrottled

STATIC_DIR = Path(__file__).parent / "static"


@get("/login", include_in_schema=False)
async def login_form(
    request: Request[Any, Any, Any], next_: Annotated[str | None, QueryParameter(name="next")] = None
) -> Response[str]:
    return page("login.html", request=request, error=None, next=safe_next(next_))


@post("/login", include_in_schema=False, status_code=303)
async def login(request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: Form) -> Response[Any]:
    check_same_origin(request)
    next_page = safe_next(data.get("next"))
    try:
        crowded = await SignInThrottle(services.rate_limiter, services.settings.rate_limits).attempt(
            request.client.host if request.client else "unknown"
        )
        who = await sign_in(request, db, data.get("token", ""))
    except SignInThrottled as exc:
        return _throttled(exc, next_page, request)
    except BeaconError as exc:
        if crowded is not None:  # a valid token passes whatever others did (app/ui/throttle.py)
            return _throttled(crowded, next_page, request)
        return page("login.html", status_code=401, request=request, error=exc.message, next=next_page)
    # Back to the page that asked for signing in (only a page of this console), else the token's home page.
    return Redirect(next_page or home_of(who), status_code=303)


def _throttled(exc: SignInThrottled, next_page: str | None, request: Request[Any, Any, Any]) -> Response[Any]:
    return page(
        "login.html",
        status_code=429,
        headers={"Retry-After": str(exc.retry_after)},
        request=request,
        error=exc.message,
        next=next_page,
    )


@post("/logout", include_in_schema=False, status_code=303)
async def logout(request: Request[Any, Any, Any], db: AsyncSession, data: Form) -> Redirect:
    check_csrf(request, data.get("csrf"))
    await sign_out(request, db)
    return Redirect("/ui/login", status_code=303)


@get("/", include_in_schema=False)
async def home(request: Request[Any, Any, Any]) -> Redirect:
    return Redirect(home_of(await signed_in(request)), status_code=303)


def _to_sign_in(request: Request[Any, Any, Any], _: SignInRequired) -> Response[Any]:
    """To the sign-in page, which comes back here afterwards (a page read with GET; a form post is not
    replayed)."""
    here = None
    if request.method in ("GET", "HEAD") and request.url.path.rstrip("/") != "/ui":
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(sign_in_url(here), status_code=303)


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
        guards=[console_guard],
        exception_handlers={
            SignInRequired: _to_sign_in,
            BeaconError: error_page,
            ValidationException: validation_error_page,
        },
        include_in_schema=False,
    )

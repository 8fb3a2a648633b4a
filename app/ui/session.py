"""Signing in to the console: the API token kept in an encrypted, signed, HttpOnly session cookie.

The token never appears in a URL. Every page re-checks it (a revoked token signs the browser out), and every
form that changes something carries a per-session CSRF token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from litestar import Request
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.types import ASGIApp

from app.auth import Principal, principal_for_token
from app.errors import BeaconError
from app.settings import Settings

COOKIE = "beacon_session"


class SignInRequired(Exception):
    """Raised by pages when there is no valid signed-in token; answered with a redirect to the sign-in page."""


def session_config(settings: Settings) -> CookieBackendConfig:
    assert settings.secret_key is not None
    key = hashlib.sha256(b"beacon-ui-session:" + settings.secret_key.encode()).digest()
    return CookieBackendConfig(
        secret=key,
        key=COOKIE,
        httponly=True,
        samesite="strict",
        secure=settings.base_url.startswith("https://"),
        max_age=12 * 3600,
        path="/ui",
    )


def session_middleware(settings: Settings) -> Callable[[ASGIApp], ASGIApp]:
    """The session middleware as a factory: Litestar deep-copies routers at registration, and the cookie
    backend holds a cipher object that cannot be copied, so it is built when the router's app is built."""

    def build(app: ASGIApp) -> ASGIApp:
        return session_config(settings).middleware(app)

    return build


async def sign_in(request: Request[Any, Any, Any], token: str) -> Principal:
    who = await principal_for_token(request.app.state.read_pool, token.strip())
    request.set_session({"token": token.strip(), "csrf": secrets.token_urlsafe(24)})
    return who


async def signed_in(request: Request[Any, Any, Any]) -> Principal:
    """The principal of the session's token, or SignInRequired."""
    token = (request.session or {}).get("token")
    if not token:
        raise SignInRequired
    try:
        return await principal_for_token(request.app.state.read_pool, token)
    except BeaconError:
        request.clear_session()
        raise SignInRequired from None


def csrf_token(request: Request[Any, Any, Any]) -> str:
    return str((request.session or {}).get("csrf", ""))


def check_csrf(request: Request[Any, Any, Any], submitted: str | None) -> None:
    expected = csrf_token(request)
    if not expected or not submitted or not hmac.compare_digest(expected, submitted):
        raise BeaconError("insufficient_scope", "The form has expired; reload the page and try again.")


def check_same_origin(request: Request[Any, Any, Any]) -> None:
    """Refuse a form posted from another site (the sign-in form has no session, hence no CSRF token, yet)."""
    origin = request.headers.get("origin")
    if origin is None:
        return  # not a browser form post (browsers send Origin with every POST)
    host = request.headers.get("host", "")
    public = urlsplit(request.app.state.settings.base_url)
    allowed = {f"{request.url.scheme}://{host}", f"{public.scheme}://{public.netloc}"}
    if origin.rstrip("/") not in allowed:
        raise BeaconError("insufficient_scope", "This form was sent from another site; open the console and try again.")

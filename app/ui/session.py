"""Signing in to the console: a server-side session named by a random id in an encrypted, signed, HttpOnly
cookie.

The token is never in the cookie nor in a URL: the session's row (console_sessions) references it. Every page
checks the session and its token again (a revoked token, or a signed-out session, signs the browser out), and
every form that changes something carries a per-session CSRF token. Signing out deletes the row, so a copy of
the cookie taken before is dead from then on.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.types import ASGIApp
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal, hash_token, principal_for_session, principal_for_token
from app.db.console_session import ConsoleSession
from app.errors import BeaconError
from app.services import services_of
from app.settings import Settings
from app.timefmt import utcnow

COOKIE = "beacon_session"
SESSION_SECONDS = 12 * 3600


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
        max_age=SESSION_SECONDS,
        path="/ui",
    )


def session_middleware(settings: Settings) -> Callable[[ASGIApp], ASGIApp]:
    """The session middleware as a factory: Litestar deep-copies routers at registration, and the cookie
    backend holds a cipher object that cannot be copied, so it is built when the router's app is built."""

    def build(app: ASGIApp) -> ASGIApp:
        return session_config(settings).middleware(app)

    return build


async def sign_in(request: Request[Any, Any, Any], db: AsyncSession, token: str) -> Principal:
    """Check the token, open a session for it (sweeping expired ones) and set the cookie."""
    who = await principal_for_token(services_of(request.app).read_pool, token.strip())
    session_id = secrets.token_urlsafe(32)
    now = utcnow()
    await db.execute(delete(ConsoleSession).where(ConsoleSession.expires_at <= now))
    db.add(
        ConsoleSession(
            id_hash=hash_token(session_id),
            token_id=who.token_id,
            created_at=now,
            expires_at=now + timedelta(seconds=SESSION_SECONDS),
        )
    )
    await db.commit()
    request.set_session({"sid": session_id, "csrf": secrets.token_urlsafe(24)})
    return who


async def sign_out(request: Request[Any, Any, Any], db: AsyncSession) -> None:
    session_id = (request.session or {}).get("sid")
    if session_id:
        await db.execute(delete(ConsoleSession).where(ConsoleSession.id_hash == hash_token(str(session_id))))
        await db.commit()
    request.clear_session()


def has_session(request: Request[Any, Any, Any]) -> bool:
    session = request.scope.get("session")
    return isinstance(session, dict) and bool(session.get("sid"))


async def signed_in(request: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    """The principal of the session's token, or SignInRequired (no session, signed out, expired, or its token
    revoked or expired). Checked once a request: the console's guard checks it before the page does."""
    checked = page_principal(request)
    if checked is not None:
        return checked
    session_id = (request.session or {}).get("sid")
    if not session_id:
        raise SignInRequired
    try:
        who = await principal_for_session(services_of(request.app).read_pool, hash_token(str(session_id)))
    except BeaconError:
        request.clear_session()
        raise SignInRequired from None
    request.state.console_principal = who  # the layout's navigation shows only what this token can open
    return who


def page_principal(request: ASGIConnection[Any, Any, Any, Any]) -> Principal | None:
    """The token the page signed in with (None before `signed_in` ran)."""
    who = request.state.get("console_principal")
    return who if isinstance(who, Principal) else None


def csrf_token(request: Request[Any, Any, Any]) -> str:
    return str((request.session or {}).get("csrf", ""))


def check_csrf(request: Request[Any, Any, Any], submitted: str | None) -> None:
    expected = csrf_token(request)
    # As bytes: compare_digest refuses non-ASCII text (a TypeError, so a 500), and a form field may hold any.
    if not expected or not submitted or not hmac.compare_digest(expected.encode(), submitted.encode()):
        raise BeaconError("insufficient_scope", "The form has expired; reload the page and try again.")


def check_same_origin(request: Request[Any, Any, Any]) -> None:
    """Refuse a form posted from another site (the sign-in form has no session, hence no CSRF token, yet)."""
    origin = request.headers.get("origin")
    if origin is None:
        return  # not a browser form post (browsers send Origin with every POST)
    host = request.headers.get("host", "")
    public = urlsplit(services_of(request.app).settings.base_url)
    allowed = {f"{request.url.scheme}://{host}", f"{public.scheme}://{public.netloc}"}
    if origin.rstrip("/") not in allowed:
        raise BeaconError("insufficient_scope", "This form was sent from another site; open the console and try again.")

"""Bearer-token authentication, scopes and dataset restriction, and the per-token rate limit, for each request.

One ASGI middleware on every `/v1` route (and Alertmanager's `/api/v2`, and the deploy tools' APIs: Grafana's
`/api/annotations`, Honeycomb's `/1/markers/`, PagerDuty's `/v2/change/enqueue`): it authenticates, counts the
request against the token's rate group, checks what the route requires (declared as `opt=requires(...)`, checked
by app/access.py's one guard, `admit`; a route that declares nothing needs `*`), and leaves the `Principal` in
`request.state.principal`.

The shippers' endpoints also take the token in the other forms their clients offer (`_shipper_credentials`).
Each deploy tool sends the token where it sends its own service's key (`credential`): Grafana's as
`Authorization: Bearer`, Honeycomb's as `X-Honeycomb-Team` (or `Authorization: Bearer`), PagerDuty's as the
body's `routing_key` (Events API v2 has no header for it; the body, at most 512 KiB, is read and handed on).

A read-only route may declare `opt={"token_check": "beside"}`: a token it has seen pass is then checked again
beside its work instead of before it, and its answer waits for that check (app/known_tokens.py). On other routes
such a token's rate-limit hit runs beside its check, and the work after both.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from typing import Any

import asyncpg
import msgspec
from litestar import Request
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, HTTPRequestEvent, Message, Receive, ReceiveMessage, Scope, Send

from app.access import admit
from app.auth import TOKEN_PREFIX, Principal, hash_token, principal_for_hash
from app.errors import BeaconError
from app.http_errors import response_for
from app.known_tokens import KnownTokens
from app.ratelimit import Decision, RateLimiter, group_for
from app.services import services_of
from app.timefmt import utcnow

_SEND_AS = "Send it as `Authorization: Bearer <token>`."
_SEND_AS_SHIPPER = (
    "Send it as `Authorization: Bearer <token>`, as the password of Basic authentication, or as `Authorization: "
    "ApiKey <token>`."
)


def shipper_path(path: str) -> bool:
    """The shippers' endpoints (app/shippers/): OTLP logs, the Elasticsearch-compatible API and Loki's push."""
    return path == "/v1/logs" or path == "/v1/elastic" or path.startswith(("/v1/elastic/", "/v1/loki/"))


def _shipper_credentials(scheme: str, credentials: str) -> str | None:
    """The token in the forms log shippers can be configured with, on their endpoints only: Basic with the token as
    the password (Loki's and Elasticsearch's outputs take a user and a password; the user is not looked at, and a
    token given as the user with no password is taken too), and Elastic's `ApiKey` scheme (the token itself, or
    base64 of `id:token`, the form Elastic's clients encode an API key in: Beats, Elastic Agent, Logstash)."""
    kind = scheme.lower()
    if kind == "basic":
        decoded = _base64_text(credentials)
        if decoded is None or ":" not in decoded:
            return None
        user, _, password = decoded.partition(":")
        return password or user or None
    if kind == "apikey":
        if credentials.startswith(TOKEN_PREFIX):
            return credentials
        decoded = _base64_text(credentials)
        if decoded is None:
            return None
        return decoded.rpartition(":")[2] or None
    return None


def _base64_text(text: str) -> str | None:
    try:
        return base64.b64decode(text, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _bearer(scope: Scope) -> str:
    """The token of the `Authorization` header; 401 missing_token saying what is wrong with the header (never
    echoing it: what was sent may be the token itself)."""
    shipper = shipper_path(scope["path"])
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            text = value.decode("latin-1").strip()
            scheme, _, credentials = text.partition(" ")
            if not text:
                break
            if scheme.lower() == "bearer" and credentials.strip():
                return credentials.strip()
            if shipper and scheme.lower() in ("basic", "apikey"):
                token = _shipper_credentials(scheme, credentials.strip())
                if token is None:
                    raise BeaconError(
                        "missing_token",
                        f"The `Authorization` header's {scheme} credentials hold no token. {_SEND_AS_SHIPPER}",
                    )
                return token
            if scheme.lower() == "bearer":
                message = "The `Authorization` header says Bearer but holds no token."
            elif not credentials.strip():
                message = "The `Authorization` header holds no scheme: the word `Bearer` is missing before the token."
            else:
                message = "The `Authorization` header uses a scheme other than Bearer."
            raise BeaconError("missing_token", f"{message} {_SEND_AS_SHIPPER if shipper else _SEND_AS}")
    raise BeaconError("missing_token", f"No API token was provided. {_SEND_AS_SHIPPER if shipper else _SEND_AS}")


def _digest(scope: Scope) -> bytes:
    return hash_token(_bearer(scope))


HONEYCOMB_PREFIX = "/1/markers/"
PAGERDUTY_PATH = "/v2/change/enqueue"
GRAFANA_PATH = "/api/annotations"
PAGERDUTY_MAX_BODY = 512 * 1024  # PagerDuty's own limit on an event


def covered(path: str) -> bool:
    """The routes that need a token."""
    return path.startswith(("/v1/", "/api/v2/", HONEYCOMB_PREFIX, GRAFANA_PATH + "/")) or path in (
        GRAFANA_PATH,
        PAGERDUTY_PATH,
    )


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1").strip()
    return None


def _honeycomb(scope: Scope) -> bytes:
    team = _header(scope, b"x-honeycomb-team")
    if team:
        return hash_token(team)
    if _header(scope, b"authorization"):
        return _digest(scope)
    raise BeaconError(
        "missing_token", "No API token was provided. Send it as `X-Honeycomb-Team: <token>`, where the API key goes."
    )


async def _pagerduty(receive: Receive) -> tuple[bytes, Receive]:
    """The token in the body's `routing_key`, and a `receive` that hands the body on to the handler."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > PAGERDUTY_MAX_BODY:
            raise BeaconError("payload_too_large", f"The event is over {PAGERDUTY_MAX_BODY // 1024} KiB.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    try:
        key = msgspec.json.decode(body).get("routing_key") if body else None
    except (msgspec.DecodeError, AttributeError):
        raise BeaconError("invalid_json", "The event is not a JSON object.") from None
    if not isinstance(key, str) or not key.strip():
        raise BeaconError(
            "missing_token",
            "'routing_key' is missing or blank: put the Beacon API token where the integration key goes.",
        )
    handed = False

    async def replay() -> ReceiveMessage:
        nonlocal handed
        if not handed:
            handed = True
            return HTTPRequestEvent(type="http.request", body=body, more_body=False)
        return await receive()

    return hash_token(key.strip()), replay


async def credential(scope: Scope, receive: Receive) -> tuple[bytes, Receive]:
    """The hash of the token the request carries, where its client sends it (see the module's docstring)."""
    path = scope["path"]
    if path.startswith(HONEYCOMB_PREFIX):
        return _honeycomb(scope), receive
    if path == PAGERDUTY_PATH:
        return await _pagerduty(receive)
    return _digest(scope), receive


class _CheckBeside:
    """The token check of a request whose work runs before it has passed (app/known_tokens.py). `gate` holds
    the response back until the check has passed, and answers 401 in its place when it fails, whatever the
    work did meanwhile."""

    def __init__(self, pool: asyncpg.Pool, digest: bytes, known: KnownTokens) -> None:
        self._digest = digest
        self._known = known
        self._task = asyncio.ensure_future(principal_for_hash(pool, digest))

    async def confirm(self) -> None:
        try:
            self._known.put(self._digest, await self._task)
        except BeaconError:
            self._known.drop(self._digest)
            raise

    def gate(self, scope: Scope, receive: Receive, send: Send) -> Send:
        state = "waiting"  # then "confirmed", or "refused" once the 401 has gone out in the response's place

        async def gated(message: Message) -> None:
            nonlocal state
            if state == "waiting":
                try:
                    await self.confirm()
                    state = "confirmed"
                except Exception as exc:  # 401, or the database's failure: the check did not pass
                    state = "refused"
                    request: Request[Any, Any, Any] = Request(scope, receive)
                    refusal = response_for(request, exc).to_asgi_response(app=None, request=request)
                    await refusal(scope, receive, send)
            if state == "confirmed":
                await send(message)

        return gated

    def cancel(self) -> None:
        self._task.cancel()


async def _hit(scope: Scope, token_id: str, limiter: RateLimiter) -> Decision:
    """Count the request against the token's rate limit."""
    return await limiter.hit(token_id, group_for(str(scope.get("method", "GET")), scope["path"]))


def _retrieved(task: asyncio.Task[Decision]) -> None:
    if not task.cancelled():
        task.exception()  # the request failed for another reason: this one's error is not news


class AuthMiddleware(ASGIMiddleware):
    scopes = ("http",)  # type: ignore[assignment]

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        if not covered(scope["path"]):
            await next_app(scope, receive, send)
            return
        digest, receive = await credential(scope, receive)
        services = services_of(scope["app"])
        known = services.known_tokens
        handler = scope.get("route_handler")
        beside = handler is not None and handler.opt.get("token_check") == "beside"
        seen = known.get(digest, utcnow())
        check = hit = None
        if seen is not None and beside:
            who = seen
            check = _CheckBeside(services.read_pool, digest, known)
            send = check.gate(scope, receive, send)
        elif seen is not None:
            # A token that passed lately: its id (fixed for its hash) keys the budget, so the rate limit's round
            # trip runs beside the check's instead of after it (bench/RESULTS.md, 2026-12-01, night).
            hit = asyncio.ensure_future(_hit(scope, seen.token_id, services.rate_limiter))
            try:
                who = await principal_for_hash(services.read_pool, digest)
            except BaseException:
                known.drop(digest)
                hit.add_done_callback(_retrieved)  # left to end: a cancelled statement costs the pool more
                raise
            known.put(digest, who)
        else:
            who = await principal_for_hash(services.read_pool, digest)
            known.put(digest, who)
        try:
            self._admit(scope, who, await (hit or _hit(scope, who.token_id, services.rate_limiter)))
            await next_app(scope, receive, send)
        except Exception:
            if check is not None:
                await check.confirm()  # a failed check answers in place of a refusal here
            raise
        finally:
            if check is not None:
                check.cancel()  # a no-op once confirmed

    @staticmethod
    def _admit(scope: Scope, who: Principal, decision: Decision) -> None:
        """Apply the rate limit's decision on the request and check the route's scope."""
        state = scope.setdefault("state", {})
        state["principal"] = who
        # Added by the before_send hook, so errors raised below carry them too.
        state["extra_headers"] = decision.headers()
        if not decision.allowed:
            raise BeaconError(
                "rate_limit_exceeded",
                f"Rate limit of {decision.limit} requests per minute exceeded; retry in {decision.retry_after} s.",
            )
        handler = scope.get("route_handler")
        admit(who, handler.opt if handler is not None else {})

"""HTTP for every adapter: one aiohttp session, timeouts, the private-network guard at send time (and on every
connection opened: it goes to the address the guard checked), status classification and redaction of secrets in
details."""

from __future__ import annotations

import email.utils
import logging
import socket
import time
from collections.abc import Iterable, Mapping
from datetime import UTC
from functools import lru_cache
from typing import Any

import aiohttp
import msgspec
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from adapters.contract import DeliveryResult
from adapters.guard import DestinationGuard, DestinationRefused, Unresolvable, literal_address
from adapters.redaction import MASK
from adapters.redaction import redact as redact  # what every outcome's detail is masked with

USER_AGENT = "Beacon-Notifier/1.0"
RETRYABLE_STATUSES = frozenset({408, 429})
MAX_RETRY_AFTER_SECONDS = 3600.0
DETAIL_LIMIT = 300


class _DropRequestLines(logging.Filter):
    """httpx logs every request URL at INFO, and a notifier URL carries its credential: keep those lines out (a
    plugin's adapter may send with httpx; the Python client in the same process does)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("HTTP Request:")


_FILTER = _DropRequestLines()


def quiet_httpx_request_logs() -> None:
    logger = logging.getLogger("httpx")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def _mask_exact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """The same structure with every secret masked inside every string (for previews).

    A preview shows a message rendered from our templates, so only the exact values can be in it: masking
    each of their parts (as `redact` does for what destinations answer) would only garble its words."""
    secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
    if isinstance(value, str):
        return _mask_exact(value, secrets)
    if isinstance(value, Mapping):
        return {_mask_exact(str(k), secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, secrets) for v in value]
    return value


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds (delta-seconds or an HTTP date), capped at an hour."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def classify(status: int, headers: Mapping[str, str], body: str = "") -> DeliveryResult:
    """2xx succeeds; 408, 429 and 5xx are worth retrying (honouring Retry-After); any other status fails."""
    if 200 <= status < 300:
        return DeliveryResult(ok=True, status=status, detail=f"HTTP {status}")
    detail = f"HTTP {status}" + (f": {body.strip()[:DETAIL_LIMIT]}" if body.strip() else "")
    if status in RETRYABLE_STATUSES or status >= 500:
        return DeliveryResult(
            ok=False,
            retryable=True,
            retry_after=parse_retry_after(headers.get("retry-after")),
            status=status,
            detail=detail,
        )
    return DeliveryResult(ok=False, retryable=False, status=status, detail=detail)


class _GuardResolver(AbstractResolver):
    """Name resolution for the HTTP client through the private-network guard: a connection goes only to an address
    the guard has checked, whatever the name resolves to later (DNS rebinding). (A literal address is not resolved:
    `HttpSender.post` checks it before every send.)"""

    def __init__(self, guard: DestinationGuard) -> None:
        self.guard = guard

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in await self.guard.addresses(host, port)
        ]

    async def close(self) -> None:
        pass


class HttpSender:
    """Shared by the HTTP adapters; created once per app (lifespan) and closed with it. Its connections are kept
    alive and reused (aiohttp: a request costs about a tenth of the CPU time it does with httpx, bench/RESULTS.md);
    each goes to an address the guard checked when it was opened."""

    def __init__(self, guard: DestinationGuard, *, timeout: float = 10.0) -> None:
        self.guard = guard
        self.timeout = aiohttp.ClientTimeout(total=None, connect=min(timeout, 5.0), sock_read=timeout)
        self._session: aiohttp.ClientSession | None = None  # made on first use, on the loop that sends
        quiet_httpx_request_logs()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(resolver=_GuardResolver(self.guard), use_dns_cache=False),
                timeout=self.timeout,
                headers={"User-Agent": USER_AGENT},
                cookie_jar=aiohttp.DummyCookieJar(),  # one destination's cookies never reach another
                trust_env=False,  # never through a proxy from the environment
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post_json(
        self,
        url: str,
        payload: Any,
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> DeliveryResult:
        body = msgspec.json.encode(payload)
        return await self.post(
            url, body, headers={"Content-Type": "application/json", **(headers or {})}, params=params, secrets=secrets
        )

    async def post(
        self,
        url: str,
        body: bytes,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> DeliveryResult:
        secrets = [*secrets, url]
        try:
            target, host, port, host_header = _target(url, tuple(params.items()) if params else ())
            await self.guard.addresses(host, port)  # refused now, not only when a connection is opened
            if host_header:
                headers = {**headers, "Host": host_header}
            # No redirects: one could lead past the guard.
            async with self._client().post(target, data=body, headers=headers, allow_redirects=False) as response:
                text = (await response.content.read(4096)).decode("utf-8", "replace")
        except DestinationRefused as exc:
            return DeliveryResult(ok=False, retryable=False, detail=redact(f"refused: {exc}", secrets))
        except (aiohttp.InvalidURL, ValueError) as exc:  # stored before the config check parsed URLs as we do
            return DeliveryResult(ok=False, retryable=False, detail=redact(f"invalid URL: {exc}", secrets))
        except Unresolvable as exc:
            return DeliveryResult(ok=False, retryable=True, detail=redact(f"network error: {exc}", secrets))
        except TimeoutError as exc:  # aiohttp's timeouts are TimeoutErrors
            return DeliveryResult(ok=False, retryable=True, detail=f"timeout: {type(exc).__name__}")
        except (aiohttp.ClientError, OSError) as exc:
            return DeliveryResult(
                ok=False, retryable=True, detail=redact(f"network error: {type(exc).__name__}: {exc}", secrets)
            )
        # Redact before classify() shortens the body: a cut must never leave half a secret behind.
        return classify(response.status, response.headers, redact(text, secrets))


# A notifier's URL is parsed once, not on every send (the check of the address it resolves to still is made on
# every send).
@lru_cache(maxsize=1024)
def _target(url: str, params: tuple[tuple[str, str], ...]) -> tuple[URL, str, int, str | None]:
    """The URL to send to (with `params`), its host and port, and the Host header when it is not the URL's: an
    address written as one number, octal or hex (`2130706433`, `0x7f.1`) is sent to the address it means."""
    target = URL(url)
    if params:
        target = target.update_query(dict(params))
    host = target.raw_host or ""
    port = target.port or (443 if target.scheme == "https" else 80)
    address = literal_address(host)
    if address is None or address == host.strip("[]"):
        return target, host, port, None
    return target.with_host(address), host, port, target.raw_authority

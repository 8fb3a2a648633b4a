"""HTTP for every adapter: one `httpx.AsyncClient`, timeouts, the private-network guard at send time (with the
connection pinned to the checked address), status classification and redaction of secrets in details."""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Iterable, Mapping
from datetime import UTC
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from adapters.base import MASK, DeliveryResult
from adapters.guard import DestinationGuard, DestinationRefused, Unresolvable
from adapters.redaction import redact as redact  # what every outcome's detail is masked with

USER_AGENT = "Beacon-Notifier/1.0"
RETRYABLE_STATUSES = frozenset({408, 429})
MAX_RETRY_AFTER_SECONDS = 3600.0
DETAIL_LIMIT = 300


class _DropRequestLines(logging.Filter):
    """httpx logs every request URL at INFO, and a notifier URL carries its credential: keep those lines out."""

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


class HttpSender:
    """Shared by the HTTP adapters; created once per app (lifespan) and closed with it."""

    def __init__(self, guard: DestinationGuard, *, timeout: float = 10.0, client: httpx.AsyncClient | None = None):
        self.guard = guard
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            follow_redirects=False,  # a redirect could lead past the private-network guard
            headers={"User-Agent": USER_AGENT},
            trust_env=False,  # never through a proxy from the environment
        )
        quiet_httpx_request_logs()

    async def aclose(self) -> None:
        await self.client.aclose()

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
            request = await self._pinned_request(url, body, headers, params)
            response = await self.client.send(request)
            try:
                text = (await response.aread())[:4096].decode("utf-8", "replace")
            finally:
                await response.aclose()
        except DestinationRefused as exc:
            return DeliveryResult(ok=False, retryable=False, detail=redact(f"refused: {exc}", secrets))
        except httpx.InvalidURL as exc:  # stored before the config check parsed URLs as httpx does
            return DeliveryResult(ok=False, retryable=False, detail=redact(f"invalid URL: {exc}", secrets))
        except Unresolvable as exc:
            return DeliveryResult(ok=False, retryable=True, detail=redact(f"network error: {exc}", secrets))
        except httpx.TimeoutException as exc:
            return DeliveryResult(ok=False, retryable=True, detail=f"timeout: {type(exc).__name__}")
        except (httpx.TransportError, OSError) as exc:
            return DeliveryResult(
                ok=False, retryable=True, detail=redact(f"network error: {type(exc).__name__}: {exc}", secrets)
            )
        # Redact before classify() shortens the body: a cut must never leave half a secret behind.
        return classify(response.status_code, response.headers, redact(text, secrets))

    async def _pinned_request(
        self, url: str, body: bytes, headers: Mapping[str, str], params: Mapping[str, str] | None
    ) -> httpx.Request:
        """Resolve and check the host, then connect to that very address (Host header and TLS name unchanged)."""
        target, host, port, host_header = _target(url, tuple(params.items()) if params else ())
        address = (await self.guard.addresses(host, port))[0]
        extensions: dict[str, Any] = {"sni_hostname": host} if target.scheme == "https" else {}
        return self.client.build_request(
            "POST",
            _pinned(target, address),
            content=body,
            headers={**headers, "Host": host_header},
            extensions=extensions,
        )


# A notifier's URL is parsed once, not on every send (the check of the address it resolves to still is made on
# every send).
@lru_cache(maxsize=1024)
def _target(url: str, params: tuple[tuple[str, str], ...]) -> tuple[httpx.URL, str, int, str]:
    """The URL to send to (with `params`), its host, port and Host header."""
    target = httpx.URL(url)
    if params:
        target = target.copy_merge_params(dict(params))
    parts = urlsplit(str(target))
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return target, host, port, target.netloc.decode("ascii")


@lru_cache(maxsize=1024)
def _pinned(target: httpx.URL, address: str) -> httpx.URL:
    return target.copy_with(host=address)

"""One request's attempts: what the sync and async send loops share around the `Backoff` policy."""

from __future__ import annotations

import functools
import logging
import os
import ssl
from typing import Any

import httpx

from beacon_client.backoff import Backoff
from beacon_client.call import Call, api_error
from beacon_client.errors import BeaconConnectionError

log = logging.getLogger("beacon.client")

DEFAULT_URL = "http://127.0.0.1:8000"


def resolve(url: str | None, token: str | None) -> tuple[str, dict[str, str]]:
    """The service address and request headers, from the arguments or BEACON_URL / BEACON_TOKEN."""
    base = (url or os.environ.get("BEACON_URL") or DEFAULT_URL).rstrip("/")
    headers = {"User-Agent": "beacon-python-client/0.1"}
    token = token or os.environ.get("BEACON_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return base, headers


def tls_context(url: str) -> ssl.SSLContext:
    """The TLS context of a client for `url`. httpx builds its default one (certifi's bundle: ~35 ms of CPU, a
    fifth of a `beacon query`) for every client it makes. For an https URL it is built here once per process; for
    plain http the client gets a context that trusts no authority at all: never used (requests go to `url`, and
    redirects are not followed), and refusing every certificate if it ever were."""
    if url.lower().startswith("https://"):
        return _verifying_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@functools.cache
def _verifying_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def build_request(
    http: httpx.Client | httpx.AsyncClient, base: str, headers: dict[str, str], call: Call[Any]
) -> httpx.Request:
    return http.build_request(
        call.method, base + call.path, params=call.params, content=call.content, headers={**headers, **call.headers}
    )


class Attempts:
    """Counts the attempts of one call and decides, after each outcome, between done, wait-and-retry and raise."""

    def __init__(self, backoff: Backoff, call: Call[Any]) -> None:
        self.backoff = backoff
        self.call = call
        self.retries = 0

    def after_response(self, response: httpx.Response) -> float | None:
        """None when the response is a success; else seconds to wait before the next attempt.

        Raises `BeaconAPIError` (with the last envelope) when the error is final or the retries are used up.
        The body of an error response must have been read.
        """
        if response.is_success:
            return None
        delay = self.backoff.delay_after_response(
            self.retries, response.status_code, response.headers.get("retry-after")
        )
        if delay is None:
            raise api_error(response, attempts=self.retries + 1)
        return self._next(delay, f"{response.status_code}")

    def after_error(self, exc: httpx.TransportError) -> float:
        """Seconds to wait after a transport error; raises `BeaconConnectionError` when it is final."""
        delay = self.backoff.delay_after_error(self.retries, exc)
        if delay is None:
            raise BeaconConnectionError(
                f"{self.call.method} {self.call.path} failed after {self.retries + 1} attempts: "
                f"{type(exc).__name__}: {exc}",
                attempts=self.retries + 1,
            ) from exc
        return self._next(delay, type(exc).__name__)

    def _next(self, delay: float, reason: str) -> float:
        self.retries += 1
        log.info(
            "%s %s: %s; retry %d of %d in %.2f s",
            self.call.method,
            self.call.path,
            reason,
            self.retries,
            self.backoff.max_retries,
            delay,
        )
        return delay

"""A local HTTP server that plays the service's part for the client's retry tests (pytest-httpserver)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

import pytest
from werkzeug import Request, Response


def envelope(status: int, code: str, type_: str, rid: str, message: str = "nope") -> Response:
    body = {
        "error": {
            "type": type_,
            "code": code,
            "message": message,
            "doc_url": f"http://docs/errors#{code}",
            "request_id": rid,
        }
    }
    return Response(json.dumps(body), status=status, content_type="application/json", headers={"X-Request-Id": rid})


class Script:
    """Answers with the scripted failures first, then with `success`; counts requests and request ids."""

    def __init__(self, failures: list[Callable[[str], Response]], success: Callable[[Request], Response]) -> None:
        self.failures = list(failures)
        self.success = success
        self.requests: list[Request] = []
        self.ids = (f"req_{n:04x}" for n in itertools.count(1))
        self.last_id = ""

    def __call__(self, request: Request) -> Response:
        request.get_data()  # keep the body for the test to read
        self.requests.append(request)
        self.last_id = next(self.ids)
        if self.failures:
            return self.failures.pop(0)(self.last_id)
        return self.success(request)


def too_many(retry_after: str | None) -> Callable[[str], Response]:
    def respond(rid: str) -> Response:
        r = envelope(429, "rate_limit_exceeded", "rate_limit_error", rid, "slow down")
        if retry_after is not None:
            r.headers["Retry-After"] = retry_after
        return r

    return respond


def server_error(status: int = 500) -> Callable[[str], Response]:
    code = "service_unavailable" if status == 503 else "internal_error"
    return lambda rid: envelope(status, code, "api_error", rid, "broken")


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def record_sleep(sleeps: list[float]) -> Callable[[float], None]:
    return sleeps.append

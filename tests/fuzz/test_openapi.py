"""Property-based test of the whole API from its own OpenAPI document (schemathesis).

For every operation of `/schema/openapi.json`, schemathesis sends the document's examples, its coverage
cases (boundaries, missing and wrong-typed values) and generated requests, valid and invalid, to the real app
served by uvicorn on a free loopback port, with an admin token. Every response must be no 5xx, have a status
the document declares for the operation, and a content type and body that match its schema.

Deterministic: a fixed seed, derandomized generation, no example database; bounded by `MAX_EXAMPLES` per
operation (one test per operation, so `pytest -n` spreads them). Only the operation that could revoke the
test's own token is left out. The app is served once per test process, on a database of its own.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import assume
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from app.asgi import create_app
from app.settings import RateLimits, Settings
from tests.conftest import _admin, _with_database, admin_token_in, run_sync
from tests.offline_dns import offline_resolve

SEED = 20261124
MAX_EXAMPLES = 25
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
UNLIMITED = RateLimits(ingest=10**9, query=10**9, read=10**9, other=10**9)


def _settings(database_url: str, data_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        base_url="http://testserver.local",
        secret_key="fuzz-secret-key",
        run_scheduler=False,
        rate_limits=UNLIMITED,  # every request is answered for what it is, not 429 after the first minute's
        query_timeout_seconds=5,
    )


def _document() -> dict[str, Any]:
    """The app's OpenAPI document, as it serves it (no database needed: nothing connects before a request)."""
    app = create_app(_settings("postgresql://postgres@127.0.0.1:9/unused", Path("/nonexistent")))
    with TestClient(app) as c:
        doc: dict[str, Any] = c.get("/schema/openapi.json").json()
    return doc


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: schemathesis.SerializationContext, value: Any) -> bytes:
    """Ingest's NDJSON body: the document calls it a string; anything else is sent as its JSON text. Lone
    surrogates go out as the bytes they would be, which are not UTF-8."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text.encode("utf-8", "surrogatepass")


@schemathesis.serializer("application/x-protobuf")
def _protobuf(ctx: schemathesis.SerializationContext, value: Any) -> bytes:
    """OTLP's and Loki's protobuf bodies (the shippers' endpoints): the document calls them binary; bytes go out as
    they are, anything else as its JSON text."""
    if isinstance(value, bytes):
        return value
    text = value if isinstance(value, str) else json.dumps(value)
    return text.encode("utf-8", "surrogatepass")


DOCUMENT = _document()
schema = schemathesis.openapi.from_dict(
    DOCUMENT,
    config=SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            # Hypothesis' health checks judge generation speed, which a loaded machine slows: not the API.
            "suppress-health-check": ["all"],
            "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
            "phases": {"stateful": {"enabled": False}},
        }
    ),
).exclude(method="DELETE", path="/v1/tokens/{token_id}")


@dataclass
class Served:
    url: str
    headers: dict[str, str]


class _Uvicorn:
    """The app under uvicorn in a thread of this process, on a loopback port the system chose."""

    def __init__(self, app: Litestar) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> _Uvicorn:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


@pytest.fixture(scope="module")
def served(pg_server_url: str, db_prefix: str, template_database: str, tmp_path_factory) -> Iterator[Served]:
    name = f"{db_prefix}_fuzz"
    run_sync(
        _admin(
            pg_server_url,
            f'DROP DATABASE IF EXISTS "{name}"',
            f'CREATE DATABASE "{name}" TEMPLATE "{template_database}"',
        )
    )
    url = _with_database(pg_server_url, name)
    try:
        token = run_sync(admin_token_in(url))
        app = create_app(_settings(url, tmp_path_factory.mktemp("fuzz")), resolve=offline_resolve)
        with _Uvicorn(app) as server:
            # The document fuzzed is the one the running app serves.
            assert httpx.get(f"{server.url}/schema/openapi.json").json() == DOCUMENT
            yield Served(server.url, {"Authorization": f"Bearer {token}"})
    finally:
        run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")
_FRAMING = {"content-length", "transfer-encoding", "host", "connection"}


def _is_http(headers: Mapping[str, str]) -> bool:
    """Whether generated headers make a valid HTTP/1.1 request (RFC 9110 names and values; framing headers
    are the client's). Invalid ones are refused by the HTTP server (uvicorn: a text/plain 400) before the app
    sees a request, so they test no operation."""
    return all(
        _TOKEN.fullmatch(name) and _FIELD_VALUE.fullmatch(value) and name.lower() not in _FRAMING
        for name, value in headers.items()
    )


@schema.parametrize()
def test_every_operation_answers_as_its_document_says(case: schemathesis.Case, served: Served) -> None:
    assume(_is_http(case.headers or {}))
    case.call_and_validate(base_url=served.url, headers=served.headers, checks=CHECKS)

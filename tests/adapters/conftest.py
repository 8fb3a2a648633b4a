"""Adapters are tested against real local receivers: pytest-httpserver (HTTP) and aiosmtpd (SMTP) on 127.0.0.1."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from adapters import testing as kit
from adapters.base import AdapterContext
from app.settings import Settings

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="session")
def httpserver_listen_address() -> tuple[str, int]:
    return ("127.0.0.1", 0)


def golden(name: str, actual: Any) -> None:
    """Compare with tests/adapters/golden/<name>.json (BEACON_UPDATE_GOLDEN=1 rewrites it after a reviewed change)."""
    path = GOLDEN / f"{name}.json"
    if os.environ.get("BEACON_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert actual == json.loads(path.read_text()), f"payload differs from {path.name}"


@pytest.fixture
async def ctx(httpserver) -> AsyncIterator[AdapterContext]:
    base = httpserver.url_for("").rstrip("/")
    settings = Settings(
        allow_private_destinations=True,
        base_url="https://beacon.example.com",
        incident_a_url=base + "/pd",
        incident_b_url=base + "/og",
    )
    context = kit.context(settings, message_id="dlv_0123456789abcdef01234567")
    yield context
    await context.http.aclose()


class Sink:
    """An SMTP server's message handler: keeps every envelope; recipients in `reject` get that reply."""

    def __init__(self) -> None:
        self.envelopes: list[Any] = []
        self.reject: dict[str, str] = {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.reject:
            return self.reject[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 Message accepted"


@pytest.fixture
def smtp() -> Iterator[tuple[Controller, Sink]]:
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=kit.closed_port())
    controller.start()
    try:
        yield controller, sink
    finally:
        controller.stop()

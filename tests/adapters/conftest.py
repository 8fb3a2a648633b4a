"""Adapters are tested against real local receivers: pytest-httpserver (HTTP) and aiosmtpd (SMTP) on 127.0.0.1
(fixtures `httpserver` and `smtp`, see tests/conftest.py)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters import testing as kit
from adapters.contract import AdapterContext, AdapterSettings

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str, actual: Any) -> None:
    """Compare with tests/adapters/golden/<name>.json (BEACON_UPDATE_GOLDEN=1 rewrites it after a reviewed change)."""
    path = GOLDEN / f"{name}.json"
    if os.environ.get("BEACON_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert actual == json.loads(path.read_text()), f"payload differs from {path.name}"


@pytest.fixture
async def ctx(httpserver) -> AsyncIterator[AdapterContext]:
    base = httpserver.url_for("").rstrip("/")
    settings = AdapterSettings(
        base_url="https://beacon.example.com",
        incident_a_url=base + "/pd",
        incident_b_url=base + "/og",
    )
    context = kit.context(settings, message_id="dlv_0123456789abcdef01234567")
    yield context
    await context.http.aclose()

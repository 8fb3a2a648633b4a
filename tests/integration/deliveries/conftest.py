"""The app and the delivery worker pointed at real local receivers (pytest-httpserver, aiosmtpd)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from app.deliveries.worker import Dispatcher
from app.settings import Settings
from tests.offline_dns import offline_delivery_env


@pytest.fixture
def local_settings(settings: Settings, httpserver, smtp) -> Settings:
    controller, _ = smtp
    base = httpserver.url_for("").rstrip("/")
    return replace(
        settings,
        allow_private_destinations=True,
        incident_a_url=base + "/pd",
        incident_b_url=base + "/og",
        smtp_host="127.0.0.1",
        smtp_port=controller.port,
        smtp_starttls=False,
        smtp_from="alerts@beacon.example.com",
        delivery_backoff_seconds=2.0,
    )


@pytest.fixture
async def client(app_client, local_settings: Settings) -> AsyncIterator[AsyncTestClient[Any]]:
    async with app_client(local_settings) as c:
        yield c


@pytest.fixture
async def worker(local_settings: Settings, db) -> AsyncIterator[Dispatcher]:
    """A process's delivery dispatcher, as a server's Services hold one, here on the test's engine."""
    env = offline_delivery_env(local_settings, db)
    yield Dispatcher(env)
    await env.http.aclose()

"""The app and the delivery worker pointed at real local receivers (pytest-httpserver, aiosmtpd)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from adapters.http import HttpSender
from app.deliveries.sending import DeliveryEnv
from app.notifiers.service import build_notifier_env
from app.settings import Settings
from tests.offline_dns import offline_resolve


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
async def client(make_app, local_settings: Settings) -> AsyncIterator[AsyncTestClient[Any]]:
    overrides = {k: getattr(local_settings, k) for k in local_settings.__dataclass_fields__}
    async with AsyncTestClient(app=make_app(**overrides)) as c:
        yield c


@pytest.fixture
async def worker(local_settings: Settings, db) -> AsyncIterator[SimpleNamespace]:
    """What the scheduler passes to `deliver_due`: an app state with a DeliveryEnv, here on the test's engine."""
    notifier_env = build_notifier_env(local_settings)
    notifier_env = replace(notifier_env, guard=notifier_env.guard.with_resolver(offline_resolve))
    http = HttpSender(notifier_env.guard, timeout=5.0)
    yield SimpleNamespace(delivery_env=DeliveryEnv(local_settings, notifier_env, http, db))
    await http.aclose()

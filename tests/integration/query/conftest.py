"""A small fixed dataset for query tests: eight events over two days (two partitions), with a field that
is a number in some events and a string in others, a missing field, a JSON null, an array and a dotted path.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.integration.query.loader import load_events, load_generated


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


WEB_EVENTS: list[dict[str, Any]] = [
    {"_time": t("2025-03-01T10:00:00"), "service": "api", "status": 200, "duration_ms": 12.5,
     "http.path": "/api/users", "method": "GET", "msg": "user list ok"},
    {"_time": t("2025-03-01T10:00:30"), "service": "api", "status": 500, "duration_ms": 250.0,
     "http.path": "/api/orders", "method": "POST", "msg": "order failed: Timeout"},
    {"_time": t("2025-03-01T10:01:10"), "service": "api", "status": 503, "duration_ms": 900,
     "http.path": "/api/orders", "method": "POST", "msg": "upstream timeout"},
    {"_time": t("2025-03-01T10:02:00"), "service": "web", "status": 200, "duration_ms": 5,
     "http.path": "/index.html", "method": "GET", "msg": "ok"},
    {"_time": t("2025-03-01T10:02:59.250"), "service": "web", "status": 404, "duration_ms": 3,
     "http.path": "/missing", "method": "GET", "msg": "not found"},
    {"_time": t("2025-03-02T09:00:00"), "service": "worker", "status": "500", "duration_ms": 100,
     "msg": "job 50% done_now"},
    {"_time": t("2025-03-02T09:30:00"), "service": "worker", "duration_ms": None, "msg": "heartbeat",
     "tags": ["a", "b"], "user.id": 7},
    {"_time": t("2025-03-02T09:45:00"), "service": "api", "status": 200, "duration_ms": "fast",
     "http.path": "/api/users", "method": "GET", "msg": "user list ok"},
]  # fmt: skip


@pytest.fixture
async def web(database_url: str) -> str:
    await load_events(database_url, "web", WEB_EVENTS)
    return "web"


MANY = 1205  # more rows than the default cap of 1,000


@pytest.fixture
async def many(database_url: str) -> str:
    """1,205 events one second apart from 2025-04-01T00:00:00Z."""
    await load_generated(database_url, "many", MANY, t("2025-04-01T00:00:00"))
    return "many"

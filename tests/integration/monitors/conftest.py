"""Monitors against the real app, real PostgreSQL and a real local webhook receiver (pytest-httpserver).

Events go in through POST /v1/ingest; monitors are evaluated by the loop's own code (`evaluate_due`) at a time
the test chooses, on the test's database; deliveries are sent by the real delivery worker.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import text

from app.deliveries.sending import DeliveryEnv
from app.deliveries.worker import Dispatcher, deliver_due
from app.monitors.tick import TickResult, evaluate_due
from app.settings import Settings
from tests.offline_dns import offline_delivery_env


@pytest.fixture
def local_settings(settings: Settings) -> Settings:
    # No settle time: the tests ingest first, then evaluate, so every event is committed before it is looked for.
    return replace(settings, allow_private_destinations=True, monitor_match_settle_seconds=0.0)


@pytest.fixture
async def client(app_client, local_settings: Settings) -> AsyncIterator[AsyncTestClient[Any]]:
    async with app_client(local_settings) as c:
        yield c


@pytest.fixture
async def env(local_settings: Settings, db) -> AsyncIterator[DeliveryEnv]:
    """What the loop runs with in a server (its DeliveryEnv), here on the test's own engine."""
    env = offline_delivery_env(local_settings, db)
    yield env
    await env.http.aclose()


class Harness:
    """Drives one test: ingest, create, run the loop at a chosen time, send deliveries, read back."""

    def __init__(self, client: Any, auth: dict[str, str], db: Any, env: DeliveryEnv, httpserver: Any) -> None:
        self.client = client
        self.auth = auth
        self.db = db
        self.env = env
        self.httpserver = httpserver
        self.hooks = 0  # webhooks made: each gets a name of its own (names are unique)
        # A whole second a little in the past: event times and evaluation times are exact and readable.
        self.t0 = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)

    def at(self, seconds: float) -> datetime:
        return self.t0 + timedelta(seconds=seconds)

    async def ingest(self, dataset: str, events: list[dict[str, Any]]) -> None:
        body = [
            {**e, "_time": e["_time"].isoformat() if isinstance(e.get("_time"), datetime) else e.get("_time")}
            for e in events
        ]
        body = [{k: v for k, v in e.items() if v is not None} for e in body]
        r = await self.client.post(f"/v1/ingest/{dataset}", headers=self.auth, json=body)
        assert r.status_code == 200, r.text
        assert r.json()["ingested"] == len(events), r.text

    async def webhook(self, path: str = "/hook") -> dict[str, Any]:
        self.hooks += 1
        name = "on-call hook" if self.hooks == 1 else f"on-call hook {self.hooks}"
        r = await self.client.post(
            "/v1/notifiers",
            headers=self.auth,
            json={"name": name, "type": "webhook", "config": {"url": self.httpserver.url_for(path)}},
        )
        assert r.status_code == 201, r.text
        return r.json()

    async def monitor(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "API errors", "type": "threshold", "notifier_ids": [], **fields}
        r = await self.client.post("/v1/monitors", headers=self.auth, json=body)
        assert r.status_code == 201, r.text
        return r.json()

    async def run(self, at: datetime, *, monitor_id: str | None = None) -> TickResult:
        """One tick of the loop at time `at`, with the monitor made due by then (its first run is spread over
        the interval after creation)."""
        async with self.db() as s:
            await s.execute(
                text(
                    "UPDATE monitors SET next_evaluation_at = LEAST(next_evaluation_at, :at)"
                    " WHERE CAST(:id AS text) IS NULL OR id = :id"
                ),
                {"at": at, "id": monitor_id},
            )
            await s.commit()
        return await evaluate_due(self.env, lanes=1, now=at)

    async def deliver(self) -> int:
        return await deliver_due(Dispatcher(self.env))

    async def get(self, monitor_id: str) -> dict[str, Any]:
        r = await self.client.get(f"/v1/monitors/{monitor_id}", headers=self.auth)
        assert r.status_code == 200, r.text
        return r.json()

    async def history(self, monitor_id: str) -> list[dict[str, Any]]:
        r = await self.client.get(f"/v1/monitors/{monitor_id}/history", headers=self.auth, params={"limit": 100})
        assert r.status_code == 200, r.text
        return r.json()["data"]

    async def deliveries(self, monitor_id: str) -> list[dict[str, Any]]:
        r = await self.client.get("/v1/deliveries", headers=self.auth, params={"monitor_id": monitor_id, "limit": 100})
        assert r.status_code == 200, r.text
        return r.json()["data"]

    def received(self) -> list[dict[str, Any]]:
        """The webhook bodies the receiver got, in the order of the monitor events they report (the worker's
        lanes send concurrently, so arrival order is not that)."""
        bodies = [json.loads(request.get_data()) for request, _ in self.httpserver.log]
        return sorted(bodies, key=lambda b: b["data"]["time"])

    def received_raw(self) -> list[dict[str, Any]]:
        """The webhook bodies in the order they arrived."""
        return [json.loads(request.get_data()) for request, _ in self.httpserver.log]


@pytest.fixture
def h(client, auth, db, env, httpserver) -> Harness:
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    return Harness(client, auth, db, env, httpserver)

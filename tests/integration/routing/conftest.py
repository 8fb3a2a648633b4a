"""Routing against the real app, real PostgreSQL and a real local webhook receiver (pytest-httpserver).

Time is a clock the test moves (`h.clock`): the app's handlers and the routing job read it, so group timers,
resolve timeouts, silences and time intervals are tested in seconds, not minutes. The routing job runs when
the test says (`h.route()`, the job's own code on the test's database); deliveries go out through the real
delivery worker (`h.deliver()`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from app.deliveries.worker import Dispatcher, deliver_due
from app.routing.env import RoutingEnv
from app.routing.jobs import RunResult, run_routing
from app.services import services_of
from app.settings import Settings
from tests.offline_dns import offline_delivery_env


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


@pytest.fixture
def local_settings(settings: Settings) -> Settings:
    return replace(settings, allow_private_destinations=True)


@pytest.fixture
def clock() -> Clock:
    # A whole second, a little in the past: what deliveries record (real time) comes after it.
    return Clock(datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1))


@pytest.fixture
async def client(app_client, local_settings: Settings, clock: Clock) -> AsyncIterator[AsyncTestClient[Any]]:
    async with app_client(local_settings) as c:
        services_of(c.app).routing_env.clock = clock
        yield c


@pytest.fixture
async def renv(local_settings: Settings, db, clock: Clock) -> AsyncIterator[RoutingEnv]:
    env = RoutingEnv(offline_delivery_env(local_settings, db), clock=clock)
    yield env
    await env.delivery.http.aclose()


class Harness:
    def __init__(self, client: Any, auth: dict[str, str], renv: RoutingEnv, clock: Clock, httpserver: Any) -> None:
        self.client = client
        self.auth = auth
        self.renv = renv
        self.clock = clock
        self.httpserver = httpserver

    async def notifier(self, path: str = "/hook", name: str = "hook") -> str:
        r = await self.client.post(
            "/v1/notifiers",
            headers=self.auth,
            json={"name": name, "type": "webhook", "config": {"url": self.httpserver.url_for(path)}},
        )
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    async def routing(self, route: dict[str, Any], **rest: Any) -> dict[str, Any]:
        current = await self.client.get("/v1/routing", headers=self.auth)
        r = await self.client.put(
            "/v1/routing",
            headers={**self.auth, "If-Match": current.json()["version"]},
            json={"route": route, **rest},
        )
        assert r.status_code == 200, r.text
        return dict(r.json())

    async def post(self, *alerts: dict[str, Any]) -> list[str]:
        r = await self.client.post("/v1/alerts", headers=self.auth, json=list(alerts))
        assert r.status_code == 200, r.text
        return list(r.json()["fingerprints"])

    async def alerts(self, **params: Any) -> list[dict[str, Any]]:
        r = await self.client.get("/v1/alerts", headers=self.auth, params={"limit": 100, **params})
        assert r.status_code == 200, r.text
        return list(r.json()["data"])

    async def route(self, after: float = 0) -> RunResult:
        """Move the clock on by `after` seconds and run the routing job once."""
        self.clock.advance(after)
        return await run_routing(self.renv)

    async def deliver(self) -> int:
        return await deliver_due(Dispatcher(self.renv.delivery))

    async def step(self, after: float = 0) -> list[dict[str, Any]]:
        """Run the job `after` seconds later and send what it queued; returns the messages that arrived."""
        before = len(self.httpserver.log)
        await self.route(after)
        await self.deliver()
        return [json.loads(request.get_data()) for request, _ in self.httpserver.log[before:]]

    async def deliveries(self) -> list[dict[str, Any]]:
        r = await self.client.get("/v1/deliveries", headers=self.auth, params={"limit": 100})
        assert r.status_code == 200, r.text
        return list(r.json()["data"])


@pytest.fixture
def h(client, auth, renv, clock, httpserver) -> Harness:
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    httpserver.expect_request("/pager", method="POST").respond_with_data("", status=204)
    httpserver.expect_request("/chat", method="POST").respond_with_data("", status=204)
    return Harness(client, auth, renv, clock, httpserver)


def summary(message: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]]]:
    """(reason, status, [(status, instance)]) of a webhook group message."""
    data = message["data"]
    return data["reason"], data["status"], [(a["status"], a["labels"].get("instance", "")) for a in data["alerts"]]

"""Exactly once across processes: two `beacon serve` processes on one database, 200 external alerts in 20 groups
-> 20 first notifications, and after they resolve 20 resolved ones, each received once; then the same with one
process killed with -9 during group_wait and started again."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text
from werkzeug import Response

from tests.servers import Server, clean_env, free_port

GROUPS, PER_GROUP = 20, 10


async def wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def batch(round_: str, ends_at: datetime | None) -> list[dict]:
    return [
        {"labels": {"alertname": "Down", "round": round_, "shard": f"s{g:02d}", "instance": f"i{i}"},
         **({"ends_at": ends_at.isoformat()} if ends_at else {})}
        for g in range(GROUPS) for i in range(PER_GROUP)
    ]  # fmt: skip


async def post_split(http: httpx.AsyncClient, bases: list[str], alerts: list[dict]) -> None:
    """Half the alerts to each server (as two Prometheus servers would), two whole groups a request: a group's
    alerts change together, so each group resolves in one message."""
    size = 2 * PER_GROUP
    for n, start in enumerate(range(0, len(alerts), size)):
        r = await http.post(f"{bases[n % len(bases)]}/v1/alerts", json=alerts[start : start + size])
        assert r.status_code == 200, r.text


@pytest.mark.long
async def test_group_notifications_exactly_once_across_processes_and_a_kill(
    database_url, tmp_path, httpserver, make_token, db
):
    received: list[tuple[str, str, str, str, int]] = []  # (webhook-id, round, group, reason, alerts)

    def receive(request):
        data = json.loads(request.get_data())["data"]
        labels = data["group_labels"]
        received.append((request.headers["webhook-id"], labels["round"], labels["shard"], data["reason"],
                         len(data["alerts"])))  # fmt: skip
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    auth = {"Authorization": f"Bearer {await make_token(['*'])}"}
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(tmp_path),
        BEACON_SECRET_KEY="two-servers-secret",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        BEACON_ROUTING_TICK_SECONDS="0.2",
        BEACON_DELIVERY_POLL_SECONDS="1",
    )
    servers = [Server(env, free_port()) for _ in range(2)]

    def of(round_: str, reason: str) -> list[tuple[str, str, str, str, int]]:
        return [r for r in received if r[1] == round_ and r[3] == reason]

    try:
        for server in servers:
            await asyncio.to_thread(server.wait_ready, 120)
        bases = [f"http://127.0.0.1:{s.port}" for s in servers]
        async with httpx.AsyncClient(headers=auth, timeout=30) as http:
            hook = await http.post(f"{bases[0]}/v1/notifiers", json={
                "name": "hook", "type": "webhook", "config": {"url": httpserver.url_for("/hook")}})  # fmt: skip
            assert hook.status_code == 201, hook.text
            current = (await http.get(f"{bases[1]}/v1/routing")).json()
            r = await http.put(f"{bases[1]}/v1/routing", headers={"If-Match": current["version"]}, json={"route": {
                "notifier_ids": [hook.json()["id"]], "group_by": ["round", "shard"], "group_wait_seconds": 3,
                "group_interval_seconds": 2, "repeat_interval_seconds": 3600}})  # fmt: skip
            assert r.status_code == 200, r.text
            day = datetime.now(UTC) + timedelta(days=1)

            # Round 1: both servers running the whole time.
            await post_split(http, bases, batch("1", day))
            await wait_for(lambda: _ready(lambda: len(of("1", "first")) >= GROUPS), 60, "20 first notifications")
            await post_split(http, bases, batch("1", datetime.now(UTC)))
            await wait_for(lambda: _ready(lambda: len(of("1", "resolved")) >= GROUPS), 60, "20 resolved ones")

            # Round 2: the alerts go to server B, which is killed (-9) once it has placed them in their groups
            # and before group_wait is over, then started again.
            await post_split(http, bases[1:], batch("2", day))

            async def placed() -> bool:
                async with db() as s:
                    n = (await s.execute(text("SELECT count(*) FROM alerts WHERE labels->>'round' = '2' AND NOT "
                                              "routing_pending"))).scalar_one()  # fmt: skip
                return bool(n == GROUPS * PER_GROUP)

            await wait_for(placed, 30, "round 2 placed in its groups")
            servers[1].proc.send_signal(signal.SIGKILL)
            servers[1].proc.wait(timeout=10)
            assert of("2", "first") == []  # killed during group_wait: nothing sent yet
            servers[1] = Server(env, free_port())
            await asyncio.to_thread(servers[1].wait_ready, 120)
            bases[1] = f"http://127.0.0.1:{servers[1].port}"
            await wait_for(lambda: _ready(lambda: len(of("2", "first")) >= GROUPS), 60, "round 2 first notifications")
            await post_split(http, bases, batch("2", datetime.now(UTC)))
            await wait_for(lambda: _ready(lambda: len(of("2", "resolved")) >= GROUPS), 60, "round 2 resolved ones")
            await asyncio.sleep(3)  # room for a duplicate to show up, if there were one
    finally:
        for server in servers:
            await asyncio.to_thread(server.stop)

    for round_ in ("1", "2"):
        for reason in ("first", "resolved"):
            got = of(round_, reason)
            assert Counter(shard for _, _, shard, _, _ in got) == Counter(f"s{g:02d}" for g in range(GROUPS)), (
                round_, reason, got)  # fmt: skip
            assert {n for *_, n in got} == {PER_GROUP}  # every message lists the group's 10 alerts
    assert len(received) == 4 * GROUPS  # nothing else: no repeat, no duplicate
    assert len({r[0] for r in received}) == len(received)  # each delivery received once
    async with db() as s:
        rows = (await s.execute(text("SELECT alert_group_reason, status FROM deliveries"))).all()
    assert Counter(rows) == {("first", "succeeded"): 2 * GROUPS, ("resolved", "succeeded"): 2 * GROUPS}


async def _ready(check) -> bool:
    return bool(check())

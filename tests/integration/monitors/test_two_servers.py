"""Two `beacon serve` processes on one database, or one `beacon serve --workers 2`: every triggered monitor is
evaluated by one process, produces one delivery, and the receiver gets exactly one request for it."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest
from sqlalchemy import text
from werkzeug import Response

from tests.servers import Server, clean_env, free_port

MONITORS = 12


@pytest.mark.parametrize("layout", ["two servers", "--workers 2"])
async def test_a_trigger_notifies_exactly_once_with_two_servers(
    layout, database_url, tmp_path, httpserver, make_token, db
):
    received: list[str] = []

    def receive(request):
        received.append(request.headers["webhook-id"])
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    auth = {"Authorization": f"Bearer {await make_token(['*'])}"}
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(tmp_path),
        BEACON_SECRET_KEY="two-servers-secret",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        BEACON_MONITOR_TICK_SECONDS="0.2",
        # The delivery worker's own poll never comes within the test: the loop wakes it when it queues messages.
        BEACON_DELIVERY_POLL_SECONDS="600",
        BEACON_BASE_URL="http://beacon.test",
    )
    if layout == "two servers":
        servers = [Server(env, free_port()) for _ in range(2)]
    else:  # both worker processes of one server run the loop and the delivery worker
        servers = [Server(env, free_port(), "--workers", "2")]
    try:
        for server in servers:
            await asyncio.to_thread(server.wait_ready, 60)
        a, b = (f"http://127.0.0.1:{s.port}" for s in (servers * 2)[:2])
        async with httpx.AsyncClient(headers=auth, timeout=10) as http:
            hook = await http.post(
                f"{a}/v1/notifiers",
                json={"name": "hook", "type": "webhook", "config": {"url": httpserver.url_for("/hook")}},
            )
            assert hook.status_code == 201, hook.text
            r = await http.post(f"{b}/v1/ingest/web", json=[{"status": 500} for _ in range(5)])
            assert r.status_code == 200 and r.json()["ingested"] == 5
            ids = []
            for i in range(MONITORS):
                r = await http.post(
                    f"{a if i % 2 else b}/v1/monitors",
                    json={
                        "name": f"errors {i}",
                        "type": "threshold",
                        "apl": "['web'] | where status >= 500 | summarize count()",
                        "operator": "above",
                        "threshold": 1,
                        "interval_seconds": 10,
                        "range_seconds": 300,
                        "notifier_ids": [hook.json()["id"]],
                    },
                )
                assert r.status_code == 201, r.text
                ids.append(r.json()["id"])
            # Every monitor due at the same moment: both servers' loops compete for each one.
            async with db() as session:
                await session.execute(text("UPDATE monitors SET next_evaluation_at = now()"))
                await session.commit()
            for _ in range(300):  # at most 30 s
                if len(received) >= MONITORS:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.5)  # room for a duplicate to show up, if there were one
            states = {(await http.get(f"{a}/v1/monitors/{i}")).json()["state"] for i in ids}
    finally:
        for server in servers:
            await asyncio.to_thread(server.stop)
    assert states == {"alerting"}
    assert len(received) == MONITORS and Counter(received).most_common(1)[0][1] == 1
    async with db() as session:
        rows = (await session.execute(text("SELECT id, monitor_id, status FROM deliveries"))).mappings().all()
        events = (await session.execute(text("SELECT monitor_id, kind FROM monitor_events"))).all()
    assert sorted(r["id"] for r in rows) == sorted(received)
    assert Counter(r["monitor_id"] for r in rows) == Counter(ids)  # one delivery per monitor
    assert {r["status"] for r in rows} == {"succeeded"}
    assert sorted(events) == sorted((i, "triggered") for i in ids)  # one state change per monitor

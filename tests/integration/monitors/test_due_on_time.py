"""A monitor is evaluated when it falls due, not at the loop's next poll: the process that evaluated it, created it
or changed it sets a timer for the time the next monitor falls due (app/monitors/tick.py `MonitorLoop`)."""

from __future__ import annotations

import asyncio
import time

import httpx
from sqlalchemy import text

from tests.servers import Server, clean_env, free_port

LATE = 3.0  # seconds after its due time by which a monitor is evaluated here, under load (the poll: every 60)


async def _evaluations(db, monitor_id: str) -> tuple[object, object]:
    async with db() as session:
        row = (
            await session.execute(
                text("SELECT last_due_at, last_evaluated_at FROM monitors WHERE id = :id"), {"id": monitor_id}
            )
        ).one()
    return row.last_due_at, row.last_evaluated_at


async def _next_evaluation(db, monitor_id: str, after: object, within: float) -> tuple[object, object]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        due, evaluated = await _evaluations(db, monitor_id)
        if evaluated is not None and due != after:
            return due, evaluated
        await asyncio.sleep(0.05)
    raise AssertionError(f"monitor {monitor_id} was not evaluated within {within} s")


async def test_a_monitor_is_evaluated_at_its_time_not_at_the_next_poll(database_url, tmp_path, make_token, db):
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(tmp_path),
        BEACON_SECRET_KEY="due-on-time-secret",
        BEACON_MONITOR_TICK_SECONDS="60",  # the loop's poll never comes within the test
    )
    server = Server(env, free_port())
    try:
        await asyncio.to_thread(server.wait_ready, 60)
        base = f"http://127.0.0.1:{server.port}"
        auth = {"Authorization": f"Bearer {await make_token(['*'])}"}
        async with httpx.AsyncClient(base_url=base, headers=auth, timeout=10) as http:
            r = await http.post("/v1/ingest/web", json=[{"status": 500}])
            assert r.status_code == 200, r.text
            body = {
                "name": "errors",
                "type": "threshold",
                "apl": "['web'] | where status >= 500 | summarize count()",
                "operator": "above",
                "threshold": 0,
                "interval_seconds": 10,
                "range_seconds": 300,
                "notifier_ids": [],
            }
            r = await http.post("/v1/monitors", json=body)
            assert r.status_code == 201, r.text
            monitor_id = r.json()["id"]
            # Due in a second (a new monitor's first run is spread over its interval); a change tells the loop.
            async with db() as session:
                await session.execute(
                    text("UPDATE monitors SET next_evaluation_at = now() + interval '1 second' WHERE id = :id"),
                    {"id": monitor_id},
                )
                await session.commit()
            earlier, _ = await _evaluations(db, monitor_id)  # its first run may have come before the update
            r = await http.patch(f"/v1/monitors/{monitor_id}", json={"description": "5xx seen"})
            assert r.status_code == 200, r.text

            # At its time; then, on the timer its own evaluation set, at its next time, 10 s on.
            first_due, first_at = await _next_evaluation(db, monitor_id, earlier, 1 + LATE)
            assert (first_at - first_due).total_seconds() < LATE
            second_due, second_at = await _next_evaluation(db, monitor_id, first_due, 10 + LATE)
            assert (second_due - first_due).total_seconds() == 10
            assert (second_at - second_due).total_seconds() < LATE
            r = await http.get(f"/v1/monitors/{monitor_id}")
            assert r.json()["state"] == "alerting"
    finally:
        server.stop()

"""The delivery worker: retries with backoff and Retry-After, the 10-attempt budget, pacing, the scheduler job,
and two worker processes sharing one queue without losing or doubling a delivery."""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from werkzeug import Response

from adapters import testing as kit
from adapters.base import Event
from app.deliveries import service
from app.deliveries.worker import Dispatcher, deliver_due
from tests.offline_dns import offline_delivery_env

EVENT = kit.sample_events()["triggered"]
NAMES = itertools.count()


async def make_notifier(client, auth, type_, config):
    name = f"n{next(NAMES)}"  # names are unique
    r = await client.post("/v1/notifiers", headers=auth, json={"name": name, "type": type_, "config": config})
    assert r.status_code == 201, r.text
    return r.json()


async def enqueue(db, worker, notifier_id, count=1, event: Event = EVENT) -> list[str]:
    async with db() as s:
        ids = [
            service.enqueue(s, worker.env, notifier_id=notifier_id, event=event, monitor_id="mon_1").id
            for _ in range(count)
        ]
        await s.commit()
    return ids


async def row(db, delivery_id):
    async with db() as s:
        return (await s.execute(text("SELECT * FROM deliveries WHERE id = :id"), {"id": delivery_id})).mappings().one()


async def make_due(db):
    """Fast-forward: every waiting delivery is due now (instead of sleeping through the backoff)."""
    async with db() as s:
        await s.execute(text("UPDATE deliveries SET next_attempt_at = now() WHERE status = 'retrying'"))
        await s.commit()


async def test_5xx_retries_with_backoff_then_succeeds(client, auth, httpserver, db, local_settings):
    for _ in range(2):
        httpserver.expect_oneshot_request("/h", method="POST").respond_with_data("busy", status=500)
    httpserver.expect_request("/h", method="POST").respond_with_data("ok")
    n = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/h")})
    # A 20 s base, so that "not due yet" holds however slowly a loaded machine runs the test.
    env = offline_delivery_env(replace(local_settings, delivery_backoff_seconds=20.0), db)
    worker = Dispatcher(env)
    try:
        (dlv,) = await enqueue(db, worker, n["id"])
        assert await deliver_due(worker) == 1
        first = await row(db, dlv)
        assert first["status"] == "retrying" and first["attempts"] == 1 and first["response_status"] == 500
        assert 9.9 <= (first["next_attempt_at"] - first["last_attempt_at"]).total_seconds() <= 20.1
        assert await deliver_due(worker) == 0  # not due yet
        await make_due(db)
        assert await deliver_due(worker) == 1
        second = await row(db, dlv)
        assert 19.9 <= (second["next_attempt_at"] - second["last_attempt_at"]).total_seconds() <= 40.1  # doubled
        await make_due(db)
        assert await deliver_due(worker) == 1
    finally:
        await env.http.aclose()
    done = (await client.get(f"/v1/deliveries/{dlv}", headers=auth)).json()
    assert done["status"] == "succeeded" and done["attempts"] == 3 and done["monitor_id"] == "mon_1"
    assert [a["response_status"] for a in done["attempt_log"]] == [500, 500, 200]
    assert done["kind"] == "monitor.triggered" and len(httpserver.log) == 3


async def test_429_honours_retry_after(client, auth, httpserver, db, worker):
    httpserver.expect_request("/h", method="POST").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "7"}
    )
    n = await make_notifier(client, auth, "chat_c", {"url": httpserver.url_for("/h")})
    (dlv,) = await enqueue(db, worker, n["id"])
    await deliver_due(worker)
    r = await row(db, dlv)
    assert r["status"] == "retrying" and r["response_status"] == 429
    wait = (r["next_attempt_at"] - datetime.now(UTC)).total_seconds()
    assert 5.5 <= wait <= 7.1


async def test_408_retries_and_400_fails_at_once(client, auth, httpserver, db, worker):
    httpserver.expect_request("/timeout", method="POST").respond_with_data("", status=408)
    httpserver.expect_request("/bad", method="POST").respond_with_data("invalid payload", status=400)
    slow = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/timeout")})
    bad = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/bad")})
    (a,) = await enqueue(db, worker, slow["id"])
    (b,) = await enqueue(db, worker, bad["id"])
    assert await deliver_due(worker) == 2
    assert (await row(db, a))["status"] == "retrying"
    failed = await row(db, b)
    assert failed["status"] == "failed" and failed["attempts"] == 1 and failed["next_attempt_at"] is None
    assert failed["error"] == "HTTP 400: invalid payload"


async def test_network_error_retries_and_gives_up_after_10_attempts(client, auth, db, worker):
    n = await make_notifier(client, auth, "chat_b", {"url": f"http://127.0.0.1:{kit.closed_port()}/h"})
    (dlv,) = await enqueue(db, worker, n["id"])
    for attempt in range(1, 11):
        assert await deliver_due(worker) == 1
        r = await row(db, dlv)
        assert r["attempts"] == attempt and "network error" in r["error"]
        await make_due(db)
    assert r["status"] == "failed" and r["error"].startswith("gave up after 10 attempts: network error")
    assert await deliver_due(worker) == 0
    log = (await client.get(f"/v1/deliveries/{dlv}", headers=auth)).json()["attempt_log"]
    assert [a["attempt"] for a in log] == list(range(1, 11)) and all(a["retryable"] for a in log)


async def test_deleted_or_disabled_notifier(client, auth, httpserver, db, worker):
    httpserver.expect_request("/h", method="POST").respond_with_data("ok")
    gone = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/h")})
    muted = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/h")})
    await client.patch(f"/v1/notifiers/{muted['id']}", headers=auth, json={"disabled_until": "2099-01-01T00:00:00Z"})
    (a,) = await enqueue(db, worker, gone["id"])
    (b,) = await enqueue(db, worker, muted["id"])
    await client.delete(f"/v1/notifiers/{gone['id']}", headers=auth)
    await deliver_due(worker)
    assert (await row(db, a))["error"] == "the notifier was deleted"
    assert (await row(db, b))["error"] == "the notifier is disabled until 2099-01-01T00:00:00.000Z"
    assert httpserver.log == []


async def test_chat_a_is_paced_to_one_message_per_second(client, auth, httpserver, db, worker):
    arrivals: list[float] = []

    def receive(request):
        arrivals.append(time.monotonic())
        return Response("ok")

    httpserver.expect_request("/slack", method="POST").respond_with_handler(receive)
    n = await make_notifier(client, auth, "chat_a", {"url": httpserver.url_for("/slack")})
    ids = await enqueue(db, worker, n["id"], count=3)
    rows = await wait_for_status(db, ids, "succeeded", seconds=15, tick=lambda: deliver_due(worker))
    assert len(arrivals) == 3
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert all(gap >= 0.9 for gap in gaps), gaps
    assert [r["attempts"] for r in rows] == [1, 1, 1]  # postponed, not counted as failures


async def wait_for_status(db, ids, status, *, seconds, tick=None):
    """Poll (bounded) until every delivery has `status`; `tick` runs the worker in between."""
    deadline = time.monotonic() + seconds
    while True:
        if tick is not None:
            await tick()
        rows = [await row(db, i) for i in ids]
        if {r["status"] for r in rows} == {status} or time.monotonic() > deadline:
            return rows
        await asyncio.sleep(0.1)


async def test_the_scheduler_job_delivers(make_app, local_settings, auth, httpserver, db, worker):
    # The app's own APScheduler job (run_scheduler) sends what a monitor enqueued; the test only waits.
    httpserver.expect_request("/h", method="POST").respond_with_data("ok")
    app = make_app(local_settings, run_scheduler=True, delivery_poll_seconds=0.2)
    async with AsyncTestClient(app=app) as client:
        n = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/h")})
        (dlv,) = await enqueue(db, worker, n["id"])
        (done,) = await wait_for_status(db, [dlv], "succeeded", seconds=10)
    assert done["status"] == "succeeded"
    assert len(httpserver.log) == 1


@pytest.mark.parametrize("processes", [2])
async def test_two_worker_processes_share_the_queue(client, auth, httpserver, db, worker, local_settings, processes):
    received: list[str] = []

    def receive(request):
        received.append(request.headers["webhook-id"])
        time.sleep(0.03)  # keep both processes busy at the same time
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    n = await make_notifier(client, auth, "webhook", {"url": httpserver.url_for("/hook")})
    # Six monitors' streams of ten messages: the processes share the streams, each stream goes in order.
    streams: dict[str, list[str]] = {f"mon_{m}": [] for m in range(6)}
    async with db() as s:
        for _ in range(10):
            for monitor_id, made in streams.items():
                made.append(service.enqueue(s, worker.env, notifier_id=n["id"], event=EVENT, monitor_id=monitor_id).id)
        await s.commit()
    ids = [i for made in streams.values() for i in made]
    env = {
        **os.environ,
        "BEACON_DATABASE_URL": local_settings.database_url or "",
        "BEACON_SECRET_KEY": local_settings.secret_key or "",
        "BEACON_ALLOW_PRIVATE_DESTINATIONS": "true",
        "BEACON_DATA_DIR": str(local_settings.data_dir),
        # One send at a time per process: a claim takes two stream heads, not all six, so the other process finds
        # heads to take (with the defaults one process claims every head at once and may well send all 60).
        "BEACON_DELIVERY_CONCURRENCY": "1",
        "BEACON_DELIVERY_PER_DESTINATION": "1",
    }
    # Each process says when it has imported everything, then waits for "go": both start sending at the same
    # moment (on a loaded machine one process' start-up can otherwise outlast the other's whole run).
    code = (
        "import asyncio, sys; from app.settings import Settings; from app.deliveries.worker import run_until_idle; "
        "print('ready', flush=True); sys.stdin.readline(); "
        "print(asyncio.run(run_until_idle(Settings.from_env())))"
    )
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", code, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        for _ in range(processes)
    ]
    for p in procs:
        assert p.stdout is not None
        assert (await asyncio.wait_for(p.stdout.readline(), timeout=60)).strip() == b"ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(b"go\n")
        await p.stdin.drain()
    outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), timeout=90)
    assert all(p.returncode == 0 for p in procs)
    counts = [int(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert sum(counts) == 60 and all(c > 0 for c in counts), counts  # both took part, 60 sends in all
    assert Counter(received) == Counter(ids)  # every delivery arrived exactly once
    for made in streams.values():
        assert [i for i in received if i in made] == made  # in the order it was made, across processes
    async with db() as s:
        states = (await s.execute(text("SELECT status, count(*) FROM deliveries GROUP BY status"))).all()
    assert dict(states) == {"succeeded": 60}

"""No transaction across a send, bounded concurrency, leases: a hanging destination beside a healthy one, and a
worker process killed mid-send (its lease runs out, the row is sent by another)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
import uvloop
from sqlalchemy import text
from werkzeug import Response

from adapters import testing as kit
from adapters.http import HttpSender
from app.db.engine import make_engine, make_sessionmaker
from app.deliveries import service
from app.deliveries.worker import Dispatcher, deliver_due, serve
from app.timefmt import utcnow
from tests.offline_dns import offline_delivery_env
from tests.receivers import RawHTTP

EVENT = kit.sample_events()["triggered"]


class Hanging(RawHTTP):
    """A destination that accepts a request and never answers (until the client gives up)."""

    path = "/hang"

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self.open = 0
        self.most_open = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            self.arrivals.append(time.monotonic())
            self.open += 1
            self.most_open = max(self.most_open, self.open)
            await reader.read()  # until the client hangs up
            self.open -= 1
        finally:
            writer.close()


class FailsWhenTold(RawHTTP):
    """A destination that answers 503 when its test says so (`answer`), after a request `arrived`."""

    path = "/fail"

    def __init__(self) -> None:
        super().__init__()
        self.arrived, self.answer = asyncio.Event(), asyncio.Event()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            self.arrived.set()
            await self.answer.wait()
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
        finally:
            writer.close()


async def notifier(client, auth, url: str) -> str:
    r = await client.post("/v1/notifiers", headers=auth, json={"name": url, "type": "webhook", "config": {"url": url}})
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def enqueue(db, env, notifier_id: str, monitors: list[str]) -> list[str]:
    async with db() as s:
        ids = [service.enqueue(s, env, notifier_id=notifier_id, event=EVENT, monitor_id=m).id for m in monitors]
        await s.commit()
    return ids


@pytest.fixture
async def server_worker(local_settings, db, request) -> AsyncIterator[Dispatcher]:
    """The worker as in a server (background sends), with 1 s HTTP timeouts and 1 s backoff, and the process's
    limits the test asks for (`concurrency`, `per_destination`); no poll: timers alone must keep the schedule."""
    concurrency, per_destination = request.param
    settings = replace(
        local_settings,
        http_timeout_seconds=1.0,
        delivery_backoff_seconds=1.0,
        delivery_concurrency=concurrency,
        delivery_per_destination=per_destination,
    )
    env = offline_delivery_env(settings, db)
    await env.http.aclose()
    dispatcher = Dispatcher(replace(env, http=HttpSender(env.notifiers.guard, timeout=1.0)))
    yield dispatcher
    await dispatcher.stop(grace=3)
    await dispatcher.env.http.aclose()


async def attempts(db) -> list[dict]:
    async with db() as s:
        rows = await s.execute(
            text("SELECT delivery_id, attempt, started_at, duration_ms FROM delivery_attempts ORDER BY started_at")
        )
        return [dict(r) for r in rows.mappings()]


async def until(condition, seconds: float, step: float = 0.01) -> None:
    """Poll (bounded) until `condition()` holds."""
    for _ in range(int(seconds / step)):
        if await condition():
            return
        await asyncio.sleep(step)


@pytest.mark.parametrize("server_worker", [(32, 8)], indirect=True)
async def test_a_hanging_destination_stalls_nobody(client, auth, httpserver, db, server_worker):
    healthy_at: list[float] = []

    def receive(request):
        healthy_at.append(time.monotonic())
        return Response("", status=204)

    httpserver.expect_request("/ok", method="POST").respond_with_handler(receive)
    async with Hanging() as hanging:
        stuck = await notifier(client, auth, hanging.url)
        fine = await notifier(client, auth, httpserver.url_for("/ok"))
        env = server_worker.env
        hung = await enqueue(db, env, stuck, [f"mon_{i}" for i in range(8)])
        serve(server_worker)
        await until(lambda: asyncio.sleep(0, len(hanging.arrivals) == 8), 5)  # the 8 sends are hanging now
        assert len(hanging.arrivals) == 8, await attempts(db)
        queued = time.monotonic()
        await enqueue(db, env, fine, ["mon_ok"])
        serve(server_worker)  # what the monitor loop's wake-up does
        await until(lambda: asyncio.sleep(0, bool(healthy_at)), 5)
        assert healthy_at and healthy_at[0] - queued < 0.5  # milliseconds, not the hanging sends' timeout
        await asyncio.sleep(6.5)  # attempts 1-3 of the hanging ones: 1 s each, 1 s then 2 s of backoff between

    log = [a for a in await attempts(db) if a["delivery_id"] in hung]
    by_delivery = {
        k: list(g)
        for k, g in itertools.groupby(sorted(log, key=lambda a: a["delivery_id"]), key=lambda a: a["delivery_id"])
    }
    assert set(by_delivery) == set(hung)
    for tries in by_delivery.values():
        assert len(tries) >= 3, tries
        for n, (a, b) in enumerate(itertools.pairwise(tries[:3]), start=1):
            # Backoff after attempt n: between half and all of 1 s * 2^(n-1) (jitter), plus the worker's slack.
            ended = a["started_at"] + timedelta(milliseconds=a["duration_ms"])
            gap = (b["started_at"] - ended).total_seconds()
            ceiling = 2 ** (n - 1)
            assert ceiling / 2 - 0.05 <= gap <= ceiling + 0.3, (n, gap)


@pytest.mark.parametrize("server_worker", [(4, 2)], indirect=True)
async def test_the_backoff_counts_from_the_attempts_end_when_its_outcome_is_written_late(
    client, auth, db, server_worker, caplog
):
    """A busy database writes an attempt's outcome late (here B's waits behind A's, whose row another transaction
    holds for 1.2 s); B's retry is still due its backoff after B's attempt ended, not after the write."""
    async with FailsWhenTold() as first, FailsWhenTold() as second:
        a = (await enqueue(db, server_worker.env, await notifier(client, auth, first.url), ["mon_a"]))[0]
        b = (await enqueue(db, server_worker.env, await notifier(client, auth, second.url), ["mon_b"]))[0]
        serve(server_worker)
        await until(lambda: asyncio.sleep(0, first.arrived.is_set() and second.arrived.is_set()), 5)
        async with db() as holder:
            await holder.execute(text("SELECT 1 FROM deliveries WHERE id = :id FOR UPDATE"), {"id": a})
            first.answer.set()  # A's outcome is being written now, and waits for the row
            await asyncio.sleep(0.2)
            second.answer.set()  # B's outcome comes in behind it
            await asyncio.sleep(1.2)
            await holder.rollback()

    # What the worker scheduled for B's second attempt, as its log says (the row itself moves on: B is due at once).
    def scheduled() -> list[str]:
        said = (
            re.search(rf"delivery {b} to notifier \S+ failed; next attempt at (\S+):", r.getMessage())
            for r in caplog.records
        )
        return [m[1] for m in said if m]

    await until(lambda: asyncio.sleep(0, bool(scheduled())), 5)
    logged = scheduled()
    assert logged, caplog.text
    due = datetime.fromisoformat(logged[0])
    [tried] = [t for t in await attempts(db) if t["delivery_id"] == b and t["attempt"] == 1]
    backoff = (due - (tried["started_at"] + timedelta(milliseconds=tried["duration_ms"]))).total_seconds()
    assert 0.5 - 0.01 <= backoff <= 1.0 + 0.01, backoff  # attempt 1: between half and all of 1 s (jitter)


@pytest.mark.parametrize("server_worker", [(4, 2)], indirect=True)
async def test_one_destination_takes_only_its_share_of_the_slots(client, auth, httpserver, db, server_worker):
    httpserver.expect_request("/ok", method="POST").respond_with_data("", status=204)
    async with Hanging() as hanging:
        stuck = await notifier(client, auth, hanging.url)
        fine = await notifier(client, auth, httpserver.url_for("/ok"))
        env = server_worker.env
        await enqueue(db, env, stuck, [f"mon_{i}" for i in range(8)])
        serve(server_worker)
        await asyncio.sleep(0.3)
        queued = time.monotonic()
        await enqueue(db, env, fine, ["mon_ok"])
        serve(server_worker)
        await until(lambda: asyncio.sleep(0, bool(httpserver.log)), 5)
        assert httpserver.log and time.monotonic() - queued < 0.5
        await asyncio.sleep(1.5)
        assert hanging.most_open == 2  # 2 of the process's 4 slots, the others free for everyone else


async def test_a_killed_worker_leaves_its_row_to_another_after_the_lease(
    client, auth, httpserver, db, worker, local_settings
):
    # The first request never gets an answer (the process sending it is killed); later ones succeed.
    arrivals: list[str] = []

    def receive(request):
        arrivals.append(request.headers["webhook-id"])
        if len(arrivals) == 1:
            time.sleep(5)
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    n = await notifier(client, auth, httpserver.url_for("/hook"))
    (dlv,) = await enqueue(db, worker.env, n, ["mon_1"])
    env = {
        **os.environ,
        "BEACON_DATABASE_URL": local_settings.database_url or "",
        "BEACON_SECRET_KEY": local_settings.secret_key or "",
        "BEACON_ALLOW_PRIVATE_DESTINATIONS": "true",
        "BEACON_DATA_DIR": str(local_settings.data_dir),
        "BEACON_DELIVERY_LEASE_SECONDS": "3",
        "BEACON_HTTP_TIMEOUT_SECONDS": "30",
    }
    code = (
        "import asyncio; from app.settings import Settings; from app.deliveries.worker import run_until_idle; "
        "asyncio.run(run_until_idle(Settings.from_env()))"
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, env=env)
    try:
        await until(lambda: asyncio.sleep(0, bool(arrivals)), 30, step=0.05)
        assert arrivals == [dlv]
        claimed = await lease_of(db, dlv)
        assert claimed["claim_token"] is not None and claimed["status"] == "pending"
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    assert await deliver_due(worker) == 0  # still leased to the dead process: not sent twice meanwhile
    await until(lambda: lease_over(db, dlv), 10, step=0.1)
    assert await deliver_due(worker) == 1
    done = await lease_of(db, dlv)
    assert done["status"] == "succeeded" and done["attempts"] == 1 and done["claim_token"] is None
    assert arrivals == [dlv, dlv]  # sent again: at least once, never lost


async def lease_over(db, delivery_id: str) -> bool:
    return (await lease_of(db, delivery_id))["lease_over"] is True


async def lease_of(db, delivery_id: str) -> dict:
    async with db() as s:
        row = await s.execute(
            text(
                "SELECT status, attempts, claim_token, claimed_until < now() AS lease_over"
                " FROM deliveries WHERE id = :id"
            ),
            {"id": delivery_id},
        )
        return dict(row.mappings().one())


async def test_retry_is_refused_while_a_worker_holds_the_lease(client, auth, httpserver, db, worker):
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    n = await notifier(client, auth, httpserver.url_for("/hook"))
    (dlv,) = await enqueue(db, worker.env, n, ["mon_1"])
    async with db() as s:  # what a claim leaves while its send is under way (no row lock held)
        await s.execute(
            text(
                "UPDATE deliveries SET claimed_until = now() + interval '60 seconds', claim_token = 't' WHERE id = :id"
            ),
            {"id": dlv},
        )
        await s.commit()
    r = await client.post(f"/v1/deliveries/{dlv}/retry", headers=auth)
    assert r.status_code == 409 and "being sent" in r.json()["error"]["message"], r.text
    assert httpserver.log == []  # not sent a second time beside the worker's send
    assert await deliver_due(worker) == 0  # nor by another worker


@pytest.mark.parametrize("server_worker", [(2, 1)], indirect=True)
async def test_stopping_gives_back_the_leases_of_rows_claimed_but_not_sent(client, auth, db, server_worker):
    async with Hanging() as hanging:
        stuck = await notifier(client, auth, hanging.url)
        ids = await enqueue(db, server_worker.env, stuck, [f"mon_{i}" for i in range(6)])
        serve(server_worker)
        await until(lambda: asyncio.sleep(0, len(hanging.arrivals) == 1), 5)
        await asyncio.sleep(0.2)  # the claim ran ahead: the other rows wait in the process's queue, leased
        leased = [d for d in ids if (await lease_of(db, d))["claim_token"] is not None]
        assert len(leased) > 1, leased
        await server_worker.stop(grace=0.1)
    still = [d for d in ids if (await lease_of(db, d))["claim_token"] is not None]
    assert len(still) == 1 and len(hanging.arrivals) == 1  # only the one in flight keeps its lease (it runs out)


async def test_retry_is_refused_while_a_claim_holds_the_row_locked(client, auth, httpserver, db, worker):
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    n = await notifier(client, auth, httpserver.url_for("/hook"))
    (dlv,) = await enqueue(db, worker.env, n, ["mon_1"])
    async with db() as s:  # a claim's transaction, between its lock and its commit
        await s.execute(text("SELECT id FROM deliveries WHERE id = :id FOR UPDATE"), {"id": dlv})
        r = await client.post(f"/v1/deliveries/{dlv}/retry", headers=auth)
        assert r.status_code == 409 and "being sent" in r.json()["error"]["message"], r.text
        await s.rollback()
    assert httpserver.log == []
    r = await client.post(f"/v1/deliveries/{dlv}/retry", headers=auth)
    assert r.status_code == 200 and r.json()["status"] == "succeeded", r.text


@pytest.mark.parametrize("server_worker", [(32, 8)], indirect=True)
async def test_retries_wait_on_one_timer_and_each_goes_at_its_time(client, auth, httpserver, db, server_worker):
    waits = {}  # webhook-id -> the Retry-After its first attempt got

    def receive(request):
        msg_id = request.headers["webhook-id"]
        if msg_id in waits:
            return Response("", status=204)
        waits[msg_id] = 1 + len(waits) % 3
        return Response("slow down", status=429, headers={"Retry-After": str(waits[msg_id])})

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    n = await notifier(client, auth, httpserver.url_for("/hook"))
    ids = await enqueue(db, server_worker.env, n, [f"mon_{i}" for i in range(6)])
    serve(server_worker)
    await until(lambda: asyncio.sleep(0, len(waits) == 6), 5)
    await asyncio.sleep(0.3)  # the outcomes recorded, their retries timed
    loop = asyncio.get_running_loop()
    # The dispatcher's timers in the event loop (CPython keeps them in `_scheduled`): one, not one per row.
    timers = [
        h
        for h in loop._scheduled  # type: ignore[attr-defined]
        if not h.cancelled() and getattr(h._callback, "__qualname__", "").startswith("WakeTimer.")
    ]
    assert len(timers) == 1, timers

    async def retried() -> bool:
        return len(await attempts(db)) == 12

    await until(retried, 6, step=0.1)
    log = await attempts(db)
    for dlv in ids:  # no poll: each retry went on the timer, at its Retry-After
        first, second = (a for a in log if a["delivery_id"] == dlv)
        ended = first["started_at"] + timedelta(milliseconds=first["duration_ms"])
        assert waits[dlv] - 0.05 <= (second["started_at"] - ended).total_seconds() <= waits[dlv] + 0.5


def test_the_timer_takes_uvloops_plain_handles(settings, caplog):
    """On uvloop's event loop, as in `beacon serve`: uvloop counts milliseconds, so `call_at` for a time less than
    half of one ahead (or past) returns a plain Handle, without `when()`, which the dispatcher's timer once asked
    for: the task that asked died (issue 25 item 8)."""

    async def scenario() -> None:
        engine = make_engine(settings.database_url or "", pool_size=2)
        dispatcher = Dispatcher(offline_delivery_env(settings, make_sessionmaker(engine)))
        dispatcher.serving = True  # as `serve` does, without claiming anything
        try:
            # Rows due 0.2 ms past each of the next 40 milliseconds: each time the timer fires, the next one is
            # less than half a millisecond ahead.
            for ms in range(40):
                dispatcher._wake_at(utcnow() + timedelta(seconds=ms / 1000 + 0.0002))
            ends = time.monotonic() + 0.1
            while time.monotonic() < ends:
                dispatcher._wake_at(utcnow() + timedelta(seconds=60))  # a retry, a paced message: looks at the timer
                await asyncio.sleep(0)
        finally:
            await dispatcher.stop(grace=1)
            await engine.dispose()

    uvloop.run(scenario())
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures == [], [r.getMessage() for r in failures]


async def test_a_send_ends_within_its_time_limit_however_slowly_the_answer_trickles(client, auth, db, local_settings):
    # Each step of a request has the HTTP timeout (1 s), and a destination answering a byte every 0.2 s never hits
    # it: the send as a whole is cut off at its limit (here half the 4 s lease), so it never outlives its lease.
    settings = replace(local_settings, http_timeout_seconds=1.0, delivery_lease_seconds=4.0)

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 1000:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.2)
        except ConnectionError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    try:
        n = await notifier(client, auth, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/slow")
        worker = Dispatcher(offline_delivery_env(settings, db))
        (dlv,) = await enqueue(db, worker.env, n, ["mon_1"])
        started = time.monotonic()
        assert await asyncio.wait_for(deliver_due(worker), 10) == 1
        assert time.monotonic() - started < 3.5
        await worker.env.http.aclose()
    finally:
        server.close()
    async with db() as s:
        row = (await s.execute(text("SELECT status, error FROM deliveries WHERE id = :id"), {"id": dlv})).one()
    assert row.status == "retrying" and row.error == "timeout: no answer within 2 s in all"

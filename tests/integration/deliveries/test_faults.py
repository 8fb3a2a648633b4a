"""Faults under a running `beacon serve` sending 200 webhooks, counted by a real local receiver per `webhook-id`:
its database connections terminated again and again (nothing sent twice, nothing lost), and the process killed
with -9 mid-way (sent twice: only what it had in flight then; nothing lost)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator

import asyncpg
import pytest

from adapters import testing as kit
from app.deliveries import service
from app.deliveries.worker import run_until_idle
from app.settings import Settings, asyncpg_dsn
from tests.offline_dns import offline_delivery_env
from tests.receivers import RawHTTP
from tests.servers import Server, clean_env, free_port

EVENT = kit.sample_events()["triggered"]
N = 200
PER_DESTINATION = 8  # BEACON_DELIVERY_PER_DESTINATION's default


class Counting(RawHTTP):
    """A keep-alive HTTP/1.1 webhook receiver: answers 204 after `delay` seconds and counts each `webhook-id`;
    `on_arrival(n)` is called with the number of requests received so far."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.arrivals: list[str] = []
        self.on_arrival = lambda n: None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                pairs = (line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
                fields = {k.strip().lower(): v.strip() for k, v in pairs}
                await reader.readexactly(int(fields.get(b"content-length", b"0")))
                self.arrivals.append(fields[b"webhook-id"].decode())
                self.on_arrival(len(self.arrivals))
                await asyncio.sleep(self.delay)
                writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def receiver() -> AsyncIterator[Counting]:
    async with Counting(delay=0.02) as r:
        yield r


def serve_env(settings: Settings, **extra: str) -> dict[str, str]:
    return clean_env(
        BEACON_DATABASE_URL=settings.database_url or "",
        BEACON_SECRET_KEY=settings.secret_key or "",  # the notifier's config was sealed with it
        BEACON_DATA_DIR=str(settings.data_dir),
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        BEACON_DELIVERY_POLL_SECONDS="0.2",
        BEACON_HTTP_TIMEOUT_SECONDS="2",
        **extra,
    )


async def queue(client, auth, db, settings: Settings, url: str) -> list[str]:
    r = await client.post("/v1/notifiers", headers=auth, json={"name": "n", "type": "webhook", "config": {"url": url}})
    assert r.status_code == 201, r.text
    env = offline_delivery_env(settings, db)
    await env.http.aclose()
    async with db() as s:
        ids = [
            service.enqueue(s, env, notifier_id=r.json()["id"], event=EVENT, monitor_id=f"mon_{i}").id for i in range(N)
        ]
        await s.commit()
    return ids


async def outcomes(dsn: str) -> dict[str, tuple[str, int, int]]:
    """delivery id -> (status, attempts, attempt log rows), on a connection of the test's own."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT d.id, d.status, d.attempts, (SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id)"
            " AS logged FROM deliveries d"
        )
    finally:
        await conn.close()
    return {r["id"]: (r["status"], r["attempts"], r["logged"]) for r in rows}


async def until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


TERMINATE = """
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
"""


async def test_terminated_connections_send_nothing_twice_and_lose_nothing(client, auth, db, local_settings, receiver):
    # A short lease: a row whose outcome was not recorded would be sent again within the test.
    server = Server(serve_env(local_settings, BEACON_DELIVERY_LEASE_SECONDS="4"), free_port())
    try:
        await asyncio.to_thread(server.wait_ready, 120)
        dsn = asyncpg_dsn(local_settings.database_url or "")
        killer = await asyncpg.connect(dsn)
        ids = await queue(client, auth, db, local_settings, receiver.url)
        terminated = during_sends = 0
        try:
            # Every backend of the database but this one, every 20 ms, from the first send to the last and 1 s on.
            await until(lambda: asyncio.sleep(0, bool(receiver.arrivals)), 30, "the first send")
            last_change, seen = time.monotonic(), 0
            while time.monotonic() - last_change < 1.0:
                killed = await killer.fetchval(TERMINATE)
                terminated += killed
                if len(set(receiver.arrivals)) < N:
                    during_sends += killed
                if len(receiver.arrivals) != seen:
                    last_change, seen = time.monotonic(), len(receiver.arrivals)
                await asyncio.sleep(0.02)
        finally:
            await killer.close()

        async def all_done() -> bool:
            return all(status == "succeeded" for status, _, _ in (await outcomes(dsn)).values())

        await until(all_done, 60, "every delivery recorded as sent")
    finally:
        await asyncio.to_thread(server.stop)
    assert during_sends > 10, terminated  # the connections were cut while the sends went on
    copies = Counter(receiver.arrivals)
    assert set(copies) == set(ids)  # nothing lost
    assert [i for i, n in copies.items() if n > 1] == []  # nothing sent twice
    assert set((await outcomes(dsn)).values()) == {("succeeded", 1, 1)}  # each recorded once, one attempt
    assert not [line for line in server.lines if "a delivery task failed" in line], server.lines


async def test_a_killed_server_resends_only_what_it_had_in_flight(client, auth, db, local_settings, receiver):
    lease = 3.0
    server = Server(serve_env(local_settings, BEACON_DELIVERY_LEASE_SECONDS=str(lease)), free_port())
    killed_at = 0.0

    def kill_at_80(n: int) -> None:
        nonlocal killed_at
        if n == 80:
            os.kill(server.proc.pid, signal.SIGKILL)
            killed_at = time.monotonic()

    receiver.on_arrival = kill_at_80
    dsn = asyncpg_dsn(local_settings.database_url or "")
    try:
        await asyncio.to_thread(server.wait_ready, 120)
        ids = await queue(client, auth, db, local_settings, receiver.url)
        await until(lambda: asyncio.sleep(0, killed_at > 0), 30, "80 sends")
        await asyncio.to_thread(server.proc.wait, 10)
        await asyncio.sleep(0.3)  # the receiver reads what the process had written before it died
    finally:
        await asyncio.to_thread(server.stop)
    before = list(receiver.arrivals)
    recorded = {i for i, (_, attempts, _) in (await outcomes(dsn)).items() if attempts}
    in_flight = set(before) - recorded  # sent or being sent when it died, the outcome not written
    assert recorded <= set(before)
    assert len(in_flight) <= 2 * PER_DESTINATION, in_flight  # docs/notifiers.md: the sends under way and unwritten

    # Another process finishes once the dead one's leases have run out. It runs with the usual lease: with the
    # dead one's 3 s, its send limit would be 1.5 s, and one slow answer of this busy test's receiver a retry.
    await asyncio.wait_for(run_until_idle(local_settings), 60)

    copies = Counter(receiver.arrivals)
    assert set(copies) == set(ids)  # nothing lost
    assert {i for i, n in copies.items() if n > 1} == in_flight  # sent twice: exactly what was in flight
    assert max(copies.values()) <= 2
    found = await outcomes(dsn)
    assert {status for status, _, _ in found.values()} == {"succeeded"}
    assert all(attempts == logged == 1 for _, attempts, logged in found.values())
    print(f"in flight at the kill: {len(in_flight)} (sent twice: {len(in_flight)}), recorded: {len(recorded)}")

"""Benchmark: the delivery path against a local HTTP receiver.

1. Rendering: messages/s for each adapter (Jinja template + JSON parse) against a baseline of building the
   same payload dict by hand and `json.dumps` — the price of keeping message text in templates.
2. Sending: 1,000 deliveries queued at once (1,000 monitors' streams, one webhook notifier) through the worker
   (claim and lease with SKIP LOCKED, unseal, render, sign, POST, record the attempt) against bare POSTs of the
   same number of bodies to the same receiver (a keep-alive server in another process), as many at a time as the
   worker sends to one destination: with `httpx` (the baseline of the earlier runs in bench/RESULTS.md) and with
   `aiohttp` (the client the worker sends with since issue 26) — the price of the outbox.

Needs a PostgreSQL server: BEACON_BENCH_DATABASE_URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres);
a scratch database is created and dropped. Run:
    BEACON_BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/deliveries.py
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
import asyncpg
import httpx
import msgspec
from sqlalchemy import text

from adapters import testing as kit
from adapters.http import HttpSender
from adapters.registry import BUILTIN
from app.db.migrate import upgrade
from app.settings import Settings, asyncpg_dsn

CONFIGS = {
    "chat_a": {"url": "https://hooks.example.com/a"},
    "chat_b": {"url": "https://hooks.example.com/b"},
    "chat_c": {"url": "https://hooks.example.com/c"},
    "webhook": {"url": "https://hooks.example.com/w", "signing_secret": "whsec_" + "A" * 44},
    "incident_a": {"integration_key": "k" * 32},
    "incident_b": {"integration_key": "k" * 32},
    "email": {"addresses": ["ops@example.com"]},
}
N_RENDER = 2000
N_SEND = 1000
ROUNDS = 3


def bench_render() -> None:
    event = kit.sample_events()["triggered"]
    start = time.perf_counter()
    for _ in range(N_RENDER):
        json.dumps({"text": event.monitor_name, "blocks": [{"type": "section", "text": event.query}]})
    baseline = N_RENDER / (time.perf_counter() - start)
    print(f"render baseline (dict + json.dumps): {baseline:,.0f} msg/s")
    for adapter_cls in BUILTIN:
        adapter = kit.adapter(adapter_cls, CONFIGS[adapter_cls.type])
        adapter.render(event)  # warm the template cache
        start = time.perf_counter()
        for _ in range(N_RENDER):
            adapter.render(event)
        rate = N_RENDER / (time.perf_counter() - start)
        print(f"render {adapter_cls.type:<11} {rate:>9,.0f} msg/s   ratio to baseline {rate / baseline:.3f}")


async def bench_send(server_url: str) -> None:
    """Fan-out: N_SEND deliveries queued at once (as many monitors breaching together, one notifier each
    stream) through the worker, against bare POSTs of the same bodies, as many at a time as the worker may
    have in flight for that one destination, to the same receiver, in the same run; best of ROUNDS each."""
    from app.db.engine import make_engine, make_sessionmaker
    from app.deliveries import service
    from app.deliveries.sending import DeliveryEnv
    from app.deliveries.worker import Dispatcher, deliver_due
    from app.notifiers.schemas import NotifierCreate
    from app.notifiers.service import build_notifier_env, create_notifier

    parts = urlsplit(server_url)
    name = f"beacon_bench_{os.getpid()}"
    admin = await asyncpg.connect(asyncpg_dsn(server_url))
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(parts._replace(path=f"/{name}"))
    settings = Settings(database_url=url, secret_key="bench", allow_private_destinations=True)
    per_destination = settings.delivery_per_destination
    try:
        await asyncio.to_thread(upgrade, url)
        async with Receiver() as receiver:
            engine = make_engine(url, pool_size=20)
            sessions = make_sessionmaker(engine)
            env = build_notifier_env(settings)
            async with sessions() as s:
                n = await create_notifier(
                    s, env, NotifierCreate(name="b", type="webhook", config={"url": receiver.url + "/hook"})
                )
            denv = DeliveryEnv(settings, env, None, sessions)  # type: ignore[arg-type]  # enqueue only
            event = kit.sample_events()["triggered"]
            webhook = next(a for a in BUILTIN if a.type == "webhook")
            body = msgspec.json.encode(kit.adapter(webhook, CONFIGS["webhook"]).render(event).payload)  # the same bytes
            baselines, lean, rates, bare_cpu, lean_cpu, worker_cpu = [], [], [], [], [], []
            for round_ in range(ROUNDS):
                async with httpx.AsyncClient() as client:
                    start, cpu = time.perf_counter(), time.process_time()
                    await bare_posts(client, receiver.url + "/hook", body, per_destination)
                    baselines.append(N_SEND / (time.perf_counter() - start))
                    bare_cpu.append((time.process_time() - cpu) / N_SEND * 1e6)
                async with aiohttp.ClientSession() as session:
                    start, cpu = time.perf_counter(), time.process_time()
                    await bare_aiohttp_posts(session, receiver.url + "/hook", body, per_destination)
                    lean.append(N_SEND / (time.perf_counter() - start))
                    lean_cpu.append((time.process_time() - cpu) / N_SEND * 1e6)
                async with sessions() as s:
                    for i in range(N_SEND):
                        service.enqueue(s, denv, notifier_id=n.id, event=event, monitor_id=f"mon_{round_}_{i}")
                    await s.commit()
                received = receiver.count
                # A server's worker: its engine, notifier registry and HTTP client exist before the alerts come.
                dispatcher = Dispatcher(DeliveryEnv(settings, env, HttpSender(env.guard), sessions))
                async with sessions() as s:
                    await s.execute(text("SELECT 1"))  # a warm pool, as in a running server
                start, cpu = time.perf_counter(), time.process_time()
                sent = 0
                while made := await deliver_due(dispatcher, limit=N_SEND):
                    sent += made
                elapsed = time.perf_counter() - start
                await dispatcher.env.http.aclose()
                worker_cpu.append((time.process_time() - cpu) / N_SEND * 1e6)
                assert sent == N_SEND and receiver.count - received == N_SEND, (sent, receiver.count - received)
                rates.append(N_SEND / elapsed)
                print(
                    f"round {round_ + 1}: bare POSTs httpx {baselines[-1]:,.0f} / aiohttp {lean[-1]:,.0f} req/s,"
                    f" worker {rates[-1]:,.0f} deliveries/s ({N_SEND} in {elapsed:.2f} s),"
                    f" ratio {rates[-1] / baselines[-1]:.2f} / {rates[-1] / lean[-1]:.2f};"
                    f" CPU of this process per message: bare {bare_cpu[-1]:,.0f} / {lean_cpu[-1]:,.0f} µs,"
                    f" worker {worker_cpu[-1]:,.0f} µs"
                )
            await engine.dispose()
        baseline, rate = max(baselines), max(rates)
        print(
            f"send baseline (bare httpx POSTs, {per_destination} at a time): {baseline:,.0f} req/s (best of {ROUNDS})"
        )
        print(f"bare aiohttp POSTs, {per_destination} at a time: {max(lean):,.0f} req/s (best of {ROUNDS})")
        print(
            f"send through the worker ({N_SEND} streams, one webhook notifier, signed, logged): {rate:,.0f}"
            f" deliveries/s, {N_SEND / rate:.2f} s for all (best of {ROUNDS})   ratio {rate / baseline:.3f}"
            f" (to aiohttp's: {rate / max(lean):.3f})"
        )
        cpu_ratio = min(bare_cpu) / min(worker_cpu)
        print(
            f"CPU per message (best of {ROUNDS}): bare httpx {min(bare_cpu):,.0f} µs, bare aiohttp"
            f" {min(lean_cpu):,.0f} µs, worker {min(worker_cpu):,.0f} µs   ratio {cpu_ratio:.3f}"
            f" (to aiohttp's: {min(lean_cpu) / min(worker_cpu):.3f}; the worker's process only, PostgreSQL's backends"
            " are not counted)"
        )
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def bare_posts(client: httpx.AsyncClient, url: str, body: bytes, at_a_time: int) -> None:
    sem = asyncio.Semaphore(at_a_time)

    async def post() -> None:
        async with sem:
            r = await client.post(url, content=body, headers={"Content-Type": "application/json"})
            r.raise_for_status()

    await asyncio.gather(*(post() for _ in range(N_SEND)))


async def bare_aiohttp_posts(session: aiohttp.ClientSession, url: str, body: bytes, at_a_time: int) -> None:
    sem = asyncio.Semaphore(at_a_time)

    async def post() -> None:
        async with sem, session.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
            await r.read()
            r.raise_for_status()

    await asyncio.gather(*(post() for _ in range(N_SEND)))


class Receiver:
    """A keep-alive HTTP/1.1 receiver in its own process (it must not share the worker's CPU time slice
    accounting, nor its event loop): answers 204 to every POST and counts them."""

    def __init__(self) -> None:
        self._proc: multiprocessing.Process | None = None
        self._count = multiprocessing.Value("i", 0)
        self._port = multiprocessing.Value("i", 0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port.value}"

    @property
    def count(self) -> int:
        return int(self._count.value)

    async def __aenter__(self) -> Receiver:
        ready = multiprocessing.Event()
        self._proc = multiprocessing.Process(target=_serve, args=(self._port, self._count, ready), daemon=True)
        self._proc.start()
        await asyncio.to_thread(ready.wait, 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._proc is not None
        self._proc.terminate()
        self._proc.join()


def _serve(port: Any, count: Any, ready: Any) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                with count.get_lock():
                    count.value += 1
                writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port.value = server.sockets[0].getsockname()[1]
        ready.set()
        await server.serve_forever()

    asyncio.run(main())


def main() -> None:
    bench_render()
    server = os.environ.get("BEACON_BENCH_DATABASE_URL")
    if server:
        asyncio.run(bench_send(server))
    else:
        print("send: skipped (set BEACON_BENCH_DATABASE_URL)")


if __name__ == "__main__":
    main()

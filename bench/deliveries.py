"""Benchmark: the delivery path against a local HTTP receiver.

1. Rendering: messages/s for each adapter (Jinja template + JSON parse) against a baseline of building the
   same payload dict by hand and `json.dumps` — the price of keeping message text in templates.
2. Sending: deliveries/s through the worker (claim with SKIP LOCKED, render, sign, POST, record the attempt, commit)
   against a baseline of bare `httpx` POSTs of the same bodies to the same receiver — the price of the outbox.

Needs a PostgreSQL server: BEACON_BENCH_DATABASE_URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres);
a scratch database is created and dropped. Run:
    BEACON_BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/deliveries.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
import httpx

from adapters import testing as kit
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
N_SEND = 400


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
    from app.deliveries import service
    from app.deliveries.worker import run_until_idle
    from app.notifiers.schemas import NotifierCreate
    from app.notifiers.service import build_notifier_env, create_notifier

    parts = urlsplit(server_url)
    name = f"beacon_bench_{os.getpid()}"
    admin = await asyncpg.connect(asyncpg_dsn(server_url))
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(parts._replace(path=f"/{name}"))
    try:
        await asyncio.to_thread(upgrade, url)
        settings = Settings(database_url=url, secret_key="bench", allow_private_destinations=True)
        async with kit.LocalServer() as receiver:
            receiver.replies = []
            from app.db.engine import make_engine, make_sessionmaker
            from app.deliveries.sending import DeliveryEnv

            engine = make_engine(url, pool_size=4)
            sessions = make_sessionmaker(engine)
            env = build_notifier_env(settings)
            async with sessions() as s:
                n = await create_notifier(
                    s, env, NotifierCreate(name="b", type="webhook", config={"url": receiver.base_url + "/hook"})
                )
            denv = DeliveryEnv(settings, env, None, sessions)  # type: ignore[arg-type]
            async with sessions() as s:
                for _ in range(N_SEND):
                    service.enqueue(s, denv, notifier_id=n.id, event=kit.sample_events()["triggered"])
                await s.commit()
            await engine.dispose()

            body = json.dumps({"type": "monitor.triggered", "data": {"x": "y" * 400}}).encode()
            async with httpx.AsyncClient() as client:
                start = time.perf_counter()
                sem = asyncio.Semaphore(4)  # the worker's 4 lanes

                async def post() -> None:
                    async with sem:
                        await client.post(receiver.base_url + "/hook", content=body)

                await asyncio.gather(*(post() for _ in range(N_SEND)))
                baseline = N_SEND / (time.perf_counter() - start)
            start = time.perf_counter()
            sent = await run_until_idle(settings)
            rate = sent / (time.perf_counter() - start)
            assert sent == N_SEND, sent
        print(f"send baseline (bare httpx POST, 4 at a time): {baseline:,.0f} req/s")
        print(
            f"send through the worker (webhook, signed, logged): {rate:,.0f} deliveries/s   ratio {rate / baseline:.3f}"
        )
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def main() -> None:
    bench_render()
    server = os.environ.get("BEACON_BENCH_DATABASE_URL")
    if server:
        asyncio.run(bench_send(server))
    else:
        print("send: skipped (set BEACON_BENCH_DATABASE_URL)")


if __name__ == "__main__":
    main()

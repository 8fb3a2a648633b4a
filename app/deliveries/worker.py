"""The delivery worker: a job in every server process that claims due deliveries and sends them.

Claims use `FOR UPDATE SKIP LOCKED`, one row per transaction, held while sending: any number of processes
(and several lanes in each) share the queue without sending a row twice. `deliver_due(app_state)` is the job,
registered in `app/scheduler.py`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import func, select

from adapters.http import HttpSender
from app.db.delivery import Delivery
from app.db.engine import make_engine, make_sessionmaker
from app.deliveries.sending import DeliveryEnv, attempt
from app.notifiers.service import build_notifier_env
from app.settings import Settings

log = logging.getLogger("beacon.deliveries")
LANES = 4


async def claim_and_attempt(env: DeliveryEnv) -> str | None:
    """Claim the most overdue delivery and attempt it; None when nothing is due."""
    async with env.sessionmaker() as session:
        stmt = (
            select(Delivery)
            .where(Delivery.status.in_(("pending", "retrying")), Delivery.next_attempt_at <= func.now())
            .order_by(Delivery.next_attempt_at)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        delivery = (await session.execute(stmt)).scalar_one_or_none()
        if delivery is None:
            return None
        outcome = await attempt(session, env, delivery)
        await session.commit()
        return outcome


async def deliver_due(app_state: Any, *, limit: int = 200, lanes: int = LANES) -> int:
    """Send what is due (at most `limit` attempts, `lanes` at a time); returns the number of attempts made."""
    env: DeliveryEnv = app_state.delivery_env
    attempted = 0

    async def lane() -> None:
        nonlocal attempted
        while attempted < limit:
            outcome = await claim_and_attempt(env)
            if outcome is None:
                return
            if outcome == "attempted":
                attempted += 1

    try:
        await asyncio.gather(*(lane() for _ in range(lanes)))
    except Exception:
        # The next tick tries again; what was claimed and not committed is simply due again.
        log.exception("delivery worker tick failed")
    return attempted


class _State:
    delivery_env: DeliveryEnv


async def run_until_idle(settings: Settings, *, max_ticks: int = 1000) -> int:
    """Run ticks until nothing is due (for tools and tests that drive the worker outside a server)."""
    engine = make_engine(settings.database_url or "", pool_size=LANES)
    notifier_env = build_notifier_env(settings)
    http = HttpSender(notifier_env.guard, timeout=settings.http_timeout_seconds)
    state = _State()
    state.delivery_env = DeliveryEnv(settings, notifier_env, http, make_sessionmaker(engine))
    total = 0
    try:
        for _ in range(max_ticks):
            made = await deliver_due(state)
            total += made
            if made == 0:
                break
    finally:
        await http.aclose()
        await engine.dispose()
    return total

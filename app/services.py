"""`Services`: what a request, a scheduled job or the delivery worker reaches of the running process, typed.

Built once, in the app's lifespan (app/asgi.py: `open_services`), and closed there; nothing in it is made on
first use. Route handlers receive it as the `services` dependency (registered once, in create_app); what Litestar
does not inject into (middleware, exception handlers) reads it with `services_of(app)`; the scheduler's jobs and
the delivery worker are handed its members. Frozen: a member is replaced by building another app, never by
assigning to a running one (the members themselves keep their own state: caches, counters, a router).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.deliveries.sending import DeliveryEnv
from app.deliveries.worker import Dispatcher
from app.error_shapes import ShapedPaths
from app.ingest.service import IngestCaches
from app.known_tokens import KnownTokens
from app.metrics import Metrics
from app.monitors.tick import MonitorLoop
from app.notifiers.service import NotifierEnv
from app.pagination import CursorCodec
from app.query.slots import QuerySlots
from app.ratelimit import RateLimiter
from app.routing.env import RoutingEnv
from app.settings import Settings


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    metrics: Metrics
    started_at: datetime  # /api/v2/status's uptime
    # The database: the ORM's engine and sessions, the read pool (token checks, console sessions: one prepared
    # statement, no transaction) and the query pool (users' queries, under the statement timeout).
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    read_pool: asyncpg.Pool
    query_pool: asyncpg.Pool
    # Notifications: adapters, secrets and the private-network guard; the HTTP sender; routing; the process's
    # delivery dispatcher (claims, sends, records).
    notifier_env: NotifierEnv
    delivery_env: DeliveryEnv
    routing_env: RoutingEnv
    dispatcher: Dispatcher
    monitor_loop: MonitorLoop | None  # with the scheduler: evaluates monitors at their time
    # Per-process state of requests: ingest's caches, rate limits, per-token query slots, tokens seen lately.
    ingest_caches: IngestCaches
    rate_limiter: RateLimiter
    query_slots: QuerySlots
    known_tokens: KnownTokens
    cursor_codec: CursorCodec
    error_shapes: ShapedPaths  # the paths that answer errors in another protocol's shape (the shippers')


def services_of(app: Any) -> Services:
    """The app's Services, for what dependency injection does not reach (middleware, exception handlers);
    `app` is the Litestar app (the ASGI scope's "app")."""
    services: Services = app.state.services
    return services


def provide_services(state: State) -> Services:
    """The `services` dependency of every route handler."""
    services: Services = state.services
    return services


def services_or_none(app: Any) -> Services | None:
    """The app's Services, or None before the lifespan has built them (an error answered that early)."""
    found = app.state.get("services")
    return found if isinstance(found, Services) else None

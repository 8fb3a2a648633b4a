"""`create_app(settings)`: the only place the Litestar app is assembled."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.types import ControllerRouterHandler

from adapters.guard import DestinationGuard, Resolve
from adapters.http import HttpSender
from app.allow import complete_allow
from app.amapi.controllers import amapi_router
from app.annotations.controllers import AnnotationController
from app.auth_middleware import AuthMiddleware
from app.datasets.controllers import DatasetController
from app.db.embedded import with_database
from app.db.engine import make_engine, make_sessionmaker
from app.db.reads import open_read_pool
from app.deliveries.controllers import DeliveryController, NotifierDeliveryController
from app.deliveries.sending import DeliveryEnv
from app.deliveries.worker import Dispatcher
from app.deliveries.worker import serve as serve_deliveries
from app.deploymarkers.grafana import grafana_router
from app.deploymarkers.honeycomb import honeycomb_router
from app.deploymarkers.pagerduty import pagerduty_router
from app.deps import provide_codec, provide_session
from app.error_shapes import ShapedPaths
from app.first_use import prepare_first_use
from app.gctune import settle_heap
from app.http_errors import exception_handlers
from app.ingest.controllers import ingest
from app.ingest.service import IngestCaches
from app.inputs import refuse_unstorable_text
from app.known_tokens import KnownTokens
from app.logs import configure_logging
from app.metrics import Metrics
from app.monitors.controllers import MonitorController
from app.monitors.tick import MonitorLoop
from app.notifiers.controllers import NotifierController
from app.notifiers.service import build_notifier_env
from app.openapi import document_errors, render_plugins
from app.openapi_document import package_version
from app.operation_ids import operation_id
from app.pagination import CursorCodec
from app.query.controllers import QueryController
from app.query.slots import QuerySlots
from app.ratelimit import RateLimiter
from app.request_bodies import BodyGuard, BodyLimits
from app.request_ids import add_response_headers
from app.request_log import observe
from app.routing.controllers import AlertController, RoutingController, SilenceController
from app.routing.env import Counters, RoutingEnv
from app.routing.jobs import Router
from app.scheduler import start_scheduler
from app.services import Services, provide_services
from app.settings import Settings
from app.shippers import routes as shippers
from app.system.controllers import api_reference, error_docs, front_door, healthz, metrics, readyz
from app.timefmt import utcnow
from app.tokens.controllers import TokenController
from app.ui.alerts import alert_list
from app.ui.annotations import annotation_create, annotation_end, annotation_form
from app.ui.controllers import ui_router
from app.ui.datasets import dataset_list, dataset_page
from app.ui.monitors import monitor_detail, monitor_list
from app.ui.notifiers import notifier_list, notifier_send_resolved, notifier_test
from app.ui.routing import routing_page
from app.ui.silences import silence_create, silence_expire, silence_extend, silence_form, silence_list

log = logging.getLogger("beacon")


@functools.cache
def route_handlers() -> tuple[ControllerRouterHandler, ...]:
    """The routes outside the console, which no setting changes: built once a process, for every app made in it
    (the suite makes an app per test). Sharing them is safe: an app registers a copy of each router (Litestar
    deep-copies a router it registers, and makes a controller's router anew), never the router itself."""
    return (
        front_door,
        api_reference,
        healthz,
        readyz,
        metrics,
        error_docs,
        TokenController,
        AnnotationController,
        NotifierController,
        ingest,
        DatasetController,
        QueryController,
        NotifierDeliveryController,
        DeliveryController,
        MonitorController,
        AlertController,
        SilenceController,
        RoutingController,
        amapi_router(),
        *shippers.route_handlers(),
        grafana_router(),
        honeycomb_router(),
        pagerduty_router(),
    )


def ui_pages() -> list[ControllerRouterHandler]:
    """The console's pages, mounted under /ui by `ui_router` (which needs the settings for its session cookie)."""
    return [
        dataset_list,
        dataset_page,
        annotation_form,
        annotation_create,
        annotation_end,
        monitor_list,
        monitor_detail,
        notifier_list,
        notifier_test,
        notifier_send_resolved,
        alert_list,
        silence_list,
        silence_form,
        silence_create,
        silence_expire,
        silence_extend,
        routing_page,
    ]


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    error_shapes: ShapedPaths = (),
    resolve: Resolve | None = None,
    guard: DestinationGuard | None = None,
) -> AsyncIterator[Services]:
    """Everything the running process holds, built at start-up and closed at shutdown: pools, environments, the
    delivery dispatcher and the router (which run only with the scheduler), the per-process caches and limits.
    `resolve`: the DNS of the private-network guard (tests pass one that asks no name server); `guard`: the guard
    itself, instead (the fuzz run's, loopback only)."""
    assert settings.database_url is not None and settings.secret_key is not None
    metrics = Metrics()
    engine = make_engine(settings.database_url)
    read_pool = await open_read_pool(settings.database_url)
    query_pool = await open_read_pool(
        settings.database_url, statement_timeout=settings.query_timeout_seconds, application_name="beacon-queries"
    )
    notifier_env = build_notifier_env(settings, resolve=resolve, guard=guard)
    sessionmaker = make_sessionmaker(engine)
    http = HttpSender(notifier_env.guard, timeout=settings.http_timeout_seconds)
    delivery_env = DeliveryEnv(settings, notifier_env, http, sessionmaker, metrics=metrics)
    dispatcher = Dispatcher(delivery_env)
    routing_env = RoutingEnv(delivery_env, counters=Counters(metrics))
    monitor_loop = None
    if settings.run_scheduler:
        routing_env.router = Router(routing_env, on_queued=functools.partial(serve_deliveries, dispatcher))
        monitor_loop = MonitorLoop(routing_env, dispatcher)
    services = Services(
        settings=settings,
        metrics=metrics,
        started_at=utcnow(),
        engine=engine,
        sessionmaker=sessionmaker,
        read_pool=read_pool,
        query_pool=query_pool,
        notifier_env=notifier_env,
        delivery_env=delivery_env,
        routing_env=routing_env,
        dispatcher=dispatcher,
        monitor_loop=monitor_loop,
        ingest_caches=IngestCaches(),
        rate_limiter=RateLimiter(settings),
        query_slots=QuerySlots(settings.query_concurrency_per_token, settings.query_queue_per_token),
        known_tokens=KnownTokens(),
        cursor_codec=CursorCodec(settings.secret_key),
        error_shapes=error_shapes,
    )
    try:
        yield services
    finally:
        if monitor_loop is not None:
            await monitor_loop.stop()
        if routing_env.router is not None:
            await routing_env.router.stop()
        await dispatcher.stop(grace=settings.http_timeout_seconds + 1)
        await http.aclose()
        await services.rate_limiter.close()
        await query_pool.close()
        await read_pool.close()
        await engine.dispose()


def create_app(
    settings: Settings, *, resolve: Resolve | None = None, guard: DestinationGuard | None = None
) -> Litestar:
    """The app on `settings`; `resolve`: the DNS its notifications use (the system's when None); `guard`: their
    private-network guard, when the caller makes its own."""
    settings = with_database(settings).with_secret_key()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncGenerator[None, None]:
        # Read at each start-up, not closed over: the suite points a built app at the next test's database and
        # data directory, which nothing at build time reads (tests/app_pool.py).
        started: Settings = app.state.start_up_settings
        async with open_services(
            started, error_shapes=shippers.error_shapes(), resolve=resolve, guard=guard
        ) as services:
            app.state.services = services
            scheduler = start_scheduler(services) if started.run_scheduler else None
            if scheduler is not None:
                prepare_first_use(services.notifier_env.registry)
                serve_deliveries(services.dispatcher)
            try:
                yield
            finally:
                if scheduler is not None:
                    scheduler.shutdown(wait=False)

    app = Litestar(
        route_handlers=[*route_handlers(), ui_router(settings, ui_pages())],
        lifespan=[lifespan],
        # The one way handlers reach the process's parts: `services`, and what is made of it per request.
        dependencies={
            "services": Provide(provide_services, sync_to_thread=False),
            "db": Provide(provide_session),
            "codec": Provide(provide_codec, sync_to_thread=False),
        },
        # BodyGuard first: it times every body out, and counts the bytes held until the request ends.
        middleware=[
            BodyGuard(
                BodyLimits(
                    idle_seconds=settings.body_idle_timeout_seconds,
                    total_seconds=settings.body_timeout_seconds,
                    buffer_bytes=settings.body_buffer_bytes,
                )
            ),
            AuthMiddleware(),
        ],
        exception_handlers=exception_handlers(),
        before_request=refuse_unstorable_text,
        before_send=[add_response_headers, complete_allow],
        openapi_config=OpenAPIConfig(
            title="Beacon",
            version=package_version(),  # the document served says the same (app/openapi_document.py)
            path="/schema",
            use_handler_docstrings=True,  # each operation's description (and summary: app/openapi_document.py)
            operation_id_creator=operation_id,  # names generated clients keep (app/operation_ids.py)
            components=Components(
                security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")},
            ),
            security=[{"bearer": []}],
            render_plugins=render_plugins(),
        ),
        debug=False,
        # Logging is the process's (`beacon serve` configures it: app/logs.py), not the app's to replace.
        logging_config=None,
    )
    app.state.start_up_settings = settings
    document_errors(app)
    observe(app)
    return app


def create_app_from_env() -> Litestar:
    """Factory for `uvicorn --factory` (used by `beacon serve --workers N`)."""
    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    app = create_app(settings)
    settle_heap()
    return app

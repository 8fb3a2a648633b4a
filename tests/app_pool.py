"""Built apps reused across a worker's tests: building one is ~100 ms of CPU (Litestar registering ~220 handlers,
bench/RESULTS.md), and the suite asks for ~730; most ask for the same settings but their own database and data
directory, which only the app's start-up reads (app/asgi.py keeps them in `app.state.start_up_settings`).

An app goes back to the pool only when its test is over and it is stopped and clean; it is handed out again only
for equal settings (apart from those two) and the same DNS. Every start-up opens new services (pools, caches,
limits, metrics) on the test's own database, so what a test sees of the app is as if it were just built. What an
app keeps across start-ups is what its build and equal settings decide: its routes, Litestar's OpenAPI document and
the finished copy of it (app/openapi.py).

Only apps behind Litestar's test client (the `app_client` fixture, and `client` through it) come from here; the
apps a test builds with `make_app` (served by uvicorn, wrapped, or its own to change) are always new. With served
apps pooled too, `test_no_route_holds_a_database_connection_while_its_body_arrives` found a read-pool connection in
use in 2 of 3 runs (bench/RESULTS.md, "Merged, measured, taken back out"), not explained yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from litestar import Litestar

from app.asgi import create_app
from app.request_bodies import BodyGuard
from app.settings import Settings

IDLE_KEPT = 4  # a test that runs several apps at once leaves several behind: enough for the next such test


def _key(settings: Settings) -> Settings | None:
    """What must be equal for an app to be reused: every setting the build reads. None: build a new one (without
    a database URL or a secret key the build itself reads the data directory)."""
    if not settings.database_url or not settings.secret_key:
        return None
    return replace(settings, database_url="", data_dir=Path())


def _shape(app: Litestar) -> tuple[Any, ...]:
    """The app's routes and entry point as built: a test that registers a route of its own (or wraps the app)
    changes it, and that app is not reused."""
    routes = tuple((id(r), tuple(getattr(r, "route_handler_map", ()))) for r in app.routes)
    return id(app.asgi_handler), routes


def _stopped(app: Litestar) -> bool:
    """Never started, or its services closed (a test may still read them after the app stopped: they stay)."""
    services = app.state.get("services")
    return services is None or (services.read_pool.is_closing() and services.query_pool.is_closing())


def _clean(app: Litestar, shape: tuple[Any, ...]) -> bool:
    """Stopped, nothing else put in its state, no request body bytes held, its routes as built."""
    guards = [m for m in app.middleware if isinstance(m, BodyGuard)]
    return (
        _stopped(app)
        and set(app.state.keys()) <= {"start_up_settings", "services"}
        and all(g.budget.free == g.budget.capacity for g in guards)
        and _shape(app) == shape
    )


class AppPool:
    def __init__(self, resolve: Callable[..., Any]) -> None:
        self.resolve = resolve
        self.idle: list[tuple[Settings, Litestar]] = []
        self.shapes: dict[int, tuple[Any, ...]] = {}  # by id(app), of the apps it built and may take back
        self.built = self.reused = 0

    def take(self, settings: Settings) -> Litestar:
        key = _key(settings)
        for i, (idle_key, app) in enumerate(self.idle):
            if key is not None and idle_key == key:
                del self.idle[i]
                app.state.pop("services", None)  # the last test's, closed: this test's start-up makes its own
                app.state.start_up_settings = settings
                self.reused += 1
                return app
        self.built += 1
        app = create_app(settings, resolve=self.resolve)
        if key is not None:
            self.shapes[id(app)] = _shape(app)
        return app

    def give_back(self, app: Litestar) -> None:
        shape = self.shapes.pop(id(app), None)
        if shape is None or len(self.idle) >= IDLE_KEPT or not _clean(app, shape):
            return  # dropped
        key = _key(app.state.start_up_settings)
        assert key is not None
        self.idle.append((key, app))
        self.shapes[id(app)] = shape

"""Routes outside /v1: the front door (to the console), the API reference, liveness, readiness, metrics and the
error-code documentation page."""

from __future__ import annotations

import hmac
from typing import Any

from litestar import MediaType, Request, Response, get
from litestar.response import Redirect
from sqlalchemy import text

from app.deliveries.service import pending_deliveries
from app.errors import ERRORS, BeaconError
from app.metrics import CONTENT_TYPE
from app.services import Services
from app.templating import render_template

# Litestar's own OpenAPI pages (app/asgi.py serves them under /schema); Swagger UI lets a reader try a call.
API_REFERENCE = "/schema/swagger"


@get("/", include_in_schema=False)
async def front_door() -> Redirect:
    """A browser opening the service's address lands in the console (which asks to sign in first)."""
    return Redirect("/ui/", status_code=302)


@get("/docs", include_in_schema=False)
async def api_reference() -> Redirect:
    return Redirect(API_REFERENCE, status_code=302)


@get("/healthz", include_in_schema=False)
async def healthz(services: Services) -> dict[str, str]:
    # A server started with `--dev` says so to whatever probes it, so one that reached production is noticed.
    if services.settings.dev_mode:
        return {"status": "ok", "mode": "development"}
    return {"status": "ok"}


@get("/readyz", include_in_schema=False)
async def readyz(services: Services) -> dict[str, str]:
    try:
        async with services.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:
        raise BeaconError("service_unavailable", "The database is unreachable.", headers={"Retry-After": "5"}) from exc
    return {"status": "ready"}


@get("/docs/errors", include_in_schema=False, media_type=MediaType.HTML)
async def error_docs() -> Response[str]:
    return Response(render_template("docs/errors.html", errors=ERRORS), media_type=MediaType.HTML)


@get("/metrics", include_in_schema=False, media_type=CONTENT_TYPE)
async def metrics(request: Request[Any, Any, Any], services: Services) -> Response[bytes]:
    """Prometheus' text format. Labels carry no tenant data (app/metrics.py), but the totals show every tenant's
    volume: with BEACON_METRICS_TOKEN set, the scrape must send it as a bearer token."""
    expected = services.settings.metrics_token
    if expected is not None:
        _check_metrics_token(request.headers.get("authorization"), expected)
    return Response(services.metrics.render(await pending_deliveries(services.engine)))


def _check_metrics_token(header: str | None, expected: str) -> None:
    scheme, _, sent = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not sent.strip():
        raise BeaconError("missing_token", "GET /metrics needs `Authorization: Bearer <BEACON_METRICS_TOKEN>`.")
    if not hmac.compare_digest(sent.strip().encode(), expected.encode()):
        raise BeaconError("invalid_token", "This is not the metrics token (BEACON_METRICS_TOKEN).")

"""The OpenAPI document's error responses: Beacon's envelope, under every status each operation can answer.

Litestar would document a 400 with its own `{status_code, detail, extra}` schema, which no response has, and
no other error. `document_errors` gives every `/v1` operation, in one pass over the app's routes, the
statuses that the shared machinery produces for it, plus the few its service adds (`EXTRA`), each described
by the codes of `app.errors.ERRORS` behind it and with the `ErrorEnvelope` schema. And the pages that show it.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.routes import HTTPRoute

from app.errors import ERRORS, ErrorEnvelope
from app.openapi_document import finish
from app.services import services_of

# Swagger UI's files (swagger-ui-dist 5.18.2 from the npm registry, Apache-2.0: LICENSE and NOTICE beside them),
# served by the console's static files so that /docs works without reaching a CDN.
SWAGGER_UI = "/ui/static/swagger-ui"


class _Finished:
    """Serves the finished document (app/openapi_document.py) instead of Litestar's: made once, on first use."""

    _source: dict[str, Any] | None = None
    _finished: dict[str, Any] = {}

    def finished(self, request: Request[Any, Any, Any], document: dict[str, Any]) -> dict[str, Any]:
        if self._source is not document:
            self._finished = finish(document, services_of(request.app).notifier_env.registry.types())
            self._source = document
        return self._finished


class FinishedJson(_Finished, JsonRenderPlugin):
    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, self.finished(request, openapi_schema))


class FinishedYaml(_Finished, YamlRenderPlugin):
    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, self.finished(request, openapi_schema))


def render_plugins() -> list[OpenAPIRenderPlugin]:
    """The pages under /schema: Swagger UI (also at /schema itself) from our own files, and the document as
    JSON and YAML, finished. Litestar's other viewers load from a CDN: not served."""
    return [
        FinishedJson(),
        SwaggerRenderPlugin(
            js_url=f"{SWAGGER_UI}/swagger-ui-bundle.js",
            css_url=f"{SWAGGER_UI}/swagger-ui.css",
            standalone_preset_js_url=f"{SWAGGER_UI}/swagger-ui-standalone-preset.js",
            favicon=f"<link rel='icon' type='image/png' href='{SWAGGER_UI}/favicon-32x32.png'>",
            path=["/swagger", "/"],
        ),
        FinishedYaml(),
    ]


# Every /v1 operation: a query parameter app/inputs.py refuses (any route takes a query string), token missing
# or invalid, scope or dataset not allowed, rate limit, database down.
EVERY_ROUTE = (400, 401, 403, 429, 503)

# What services answer beyond what the route's shape implies.
EXTRA: dict[tuple[str, str], tuple[int, ...]] = {
    ("POST", "/v1/ingest/{dataset}"): (408, 409, 413, 415),  # body timeout; dataset being deleted; caps; type
    ("POST", "/v1/query"): (404,),  # unknown dataset
    ("POST", "/v1/export"): (404,),
    ("POST", "/v1/deliveries/{delivery_id}/retry"): (409,),  # being sent, or already succeeded
    ("DELETE", "/v1/notifiers/{notifier_id}"): (409,),  # the routing document sends to it
    ("POST", "/v1/notifiers"): (409,),  # the name is in use
    ("POST", "/v1/notifiers/{notifier_id}/rotate-secret"): (409,),  # a type without a signing secret
    ("PATCH", "/v1/notifiers/{notifier_id}"): (409,),  # the new name is in use
    ("PUT", "/v1/routing"): (412, 428),  # If-Match: another write came first, or the header is missing
    # losses not accepted, a notifier of the same name but another type; If-Match not current; body cap; type
    ("POST", "/v1/routing/import"): (409, 412, 413, 415),
    ("PATCH", "/v1/silences/{silence_id}"): (409,),  # the silence has expired
}


def statuses(method: str, path: str, *, has_body: bool, has_path: bool) -> list[int]:
    codes = set(EVERY_ROUTE) | set(EXTRA.get((method, path), ()))
    if has_body:
        codes.update((408, 413))  # the body stopped arriving (app/request_bodies.py); over the body limit
    if has_path:
        codes.add(404)  # unknown id or name
    return sorted(codes)


def _spec(status: int) -> ResponseSpec:
    codes = ", ".join(f"`{code}`" for code, kind in ERRORS.items() if kind.status == status)
    return ResponseSpec(data_container=ErrorEnvelope, generate_examples=False, description=f"Error: {codes}.")


def document_errors(app: Litestar) -> None:
    specs = {status: _spec(status) for status in {kind.status for kind in ERRORS.values()}}
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or not route.path.startswith("/v1/"):
            continue
        path = route.path_format
        for method, (handler, kwargs) in route.route_handler_map.items():
            codes = statuses(
                method,
                path,
                has_body="data" in kwargs.expected_reserved_kwargs,
                has_path=bool(kwargs.expected_path_params),
            )
            # Ours replace Litestar's 400; a handler's own `responses` stay as they are.
            handler.responses = {**{code: specs[code] for code in codes}, **(handler.responses or {})}

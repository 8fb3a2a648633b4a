"""/v1/alerts, /v1/silences and /v1/routing: thin handlers over app/routing/service.py and silences.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, patch, post, put
from litestar.di import Provide
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import HeaderParameter, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import IMPORT_SCOPES, requires
from app.auth import principal
from app.errors import BeaconError
from app.pace import bounded, encoded
from app.pagination import CursorCodec, Limit, ListEnvelope
from app.routing import service, silences, views
from app.routing.document import Document
from app.routing.importing import service as importing
from app.routing.importing.schemas import RoutingImport
from app.routing.importing.yamltext import MAX_BYTES
from app.routing.schemas import (
    AlertGroupOut,
    AlertOut,
    AlertPost,
    AlertsReceived,
    RoutingStatus,
    RoutingTestOut,
    RoutingTestRequest,
    SilenceCreate,
    SilenceOut,
    SilenceUpdate,
)
from app.services import Services

Filters = Annotated[
    list[str] | None,
    QueryParameter(name="filter", description='A matcher such as team="payments"; repeat it: all must hold.'),
]
State_ = Annotated[
    str | None, QueryParameter(name="state", description="firing, suppressed or resolved (default: all).")
]


async def view(request: Request[Any, Any, Any], services: Services, work: Any, what: str) -> Any:
    """A view whose work grows with alerts x silences: stopped when its client goes away or past the view time
    limit (app/pace.py)."""
    seconds = services.settings.alert_view_timeout_seconds
    return await bounded(request.receive, work, seconds=seconds, what=what)


def alert_query(filters: Filters = None, state_: State_ = None) -> views.AlertFilter:
    """The filters `GET /v1/alerts` and `GET /v1/alerts/groups` share (their query parameters)."""
    return service.alert_filter(filters, state_)


class AlertController(Controller):
    path = "/v1/alerts"
    tags = ["alerts"]
    dependencies = {"flt": Provide(alert_query, sync_to_thread=False)}

    @post("/", status_code=200, opt=requires("alerts:write"))
    async def post_alerts(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: list[AlertPost]
    ) -> AlertsReceived:
        """Alerts from outside (Alertmanager's semantics): without `ends_at` one resolves 5 minutes after it was
        last posted; posting it again extends it."""
        return await service.post_alerts(db, services.routing_env, principal(request), data)

    @get("/", opt=requires("alerts:read"))
    async def list_alerts(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        services: Services,
        flt: views.AlertFilter,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[AlertOut]:
        """List alerts.

        Firing and suppressed ones by default, filtered by label matchers and state. Needs `alerts:read`."""
        work = service.list_alerts(db, codec, services.routing_env, principal(request), flt, limit=limit, cursor=cursor)
        found: ListEnvelope[AlertOut] = await view(request, services, work, "Listing alerts")
        return found

    @get("/groups", opt=requires("alerts:read"))
    async def groups(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, flt: views.AlertFilter
    ) -> ListEnvelope[AlertGroupOut]:
        """The groups the routing tree forms of the alerts now (firing and suppressed unless `state` says)."""
        work = service.alert_groups(db, services.routing_env, principal(request), flt)
        found = await view(request, services, work, "Grouping alerts")
        envelope = ListEnvelope(data=found, has_more=False, next_cursor=None)
        body = await encoded(envelope, sum(len(g.alerts) for g in found))  # a big one off the event loop
        return envelope if body is None else Response(body, media_type="application/json")  # type: ignore[return-value]

    @get("/{fingerprint:str}", opt=requires("alerts:read"))
    async def retrieve(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, fingerprint: str
    ) -> AlertOut:
        """Retrieve an alert.

        By its fingerprint, with the silences that hold it. Needs `alerts:read`."""
        work = service.get_alert(db, services.routing_env, principal(request), fingerprint)
        found: AlertOut = await view(request, services, work, "An alert")
        return found


class SilenceController(Controller):
    path = "/v1/silences"
    tags = ["silences"]

    @post("/", status_code=201, opt=requires("silences:write"))
    async def create(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: SilenceCreate
    ) -> SilenceOut:
        """Create a silence.

        Alerts matching every matcher are not notified between `starts_at` (default now) and `ends_at`. Needs
        `silences:write`."""
        return await silences.create(db, principal(request), data, services.routing_env.now())

    @get("/", opt=requires("silences:read"))
    async def list_silences(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        services: Services,
        state_: Annotated[str | None, QueryParameter(name="state", description="pending, active or expired.")] = None,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[SilenceOut]:
        """List silences.

        Newest first, optionally in one state. Needs `silences:read`."""
        who = principal(request)
        return await silences.list_silences(
            db, codec, who, services.routing_env.now(), state=state_, limit=limit, cursor=cursor
        )

    @get("/{silence_id:str}", opt=requires("silences:read"))
    async def retrieve(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, silence_id: str
    ) -> SilenceOut:
        """Retrieve a silence.

        Needs `silences:read`."""
        return silences.to_out(
            await silences.get_visible(db, principal(request), silence_id), services.routing_env.now()
        )

    @patch("/{silence_id:str}", opt=requires("silences:write"))
    async def update(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        services: Services,
        silence_id: str,
        data: SilenceUpdate,
    ) -> SilenceOut:
        """Update a silence.

        Matchers, span or comment; an expired silence cannot change (409). Needs `silences:write`."""
        return await silences.update(db, principal(request), silence_id, data, services.routing_env.now())

    @delete("/{silence_id:str}", status_code=200, opt=requires("silences:write"))
    async def expire(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, silence_id: str
    ) -> SilenceOut:
        """Expire the silence now (it is kept, as `expired`)."""
        return await silences.expire(db, principal(request), silence_id, services.routing_env.now())


YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain")
IfMatch = Annotated[str | None, HeaderParameter(name="If-Match", description="The version replaced.")]


@dataclass
class ImportOperation(Operation):
    """The OpenAPI operation, with the body described by hand: the handler reads the YAML itself."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            description="An Alertmanager configuration (`alertmanager.yml`), at most 1 MB. Secrets in `*_file` "
            "fields are not read here: send their content in the field itself (`beacon routing import` does).",
            content={t: OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING)) for t in YAML_TYPES[:1]},
        )


def _check_yaml_type(request: Request[Any, Any, Any]) -> None:
    declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if declared and declared not in YAML_TYPES:
        raise BeaconError(
            "unsupported_media_type",
            f"The body must be the YAML of an Alertmanager configuration (Content-Type: application/yaml), "
            f"not {declared}.",
        )


def _with_etag(doc: Document) -> Response[Document]:
    return Response(content=doc, headers={"ETag": f'"{doc.version}"'})


class RoutingController(Controller):
    path = "/v1/routing"
    tags = ["routing"]

    @get("/", opt=requires("routing:read"))
    async def retrieve(self, db: AsyncSession) -> Response[Document]:
        """The routing document; its `version` (also the ETag) is what `PUT` needs in `If-Match`."""
        return _with_etag(await service.get_routing(db))

    @put("/", opt=requires("routing:write"))
    async def replace(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        services: Services,
        data: Document,
        if_match: IfMatch = None,
    ) -> Response[Document]:
        """Replace the whole document, checked as a whole: 428 without `If-Match`, 412 when it is not current."""
        return _with_etag(await service.put_routing(db, services.routing_env, principal(request), data, if_match))

    @post(
        "/import",
        status_code=200,
        opt=requires(*IMPORT_SCOPES),
        request_max_body_size=MAX_BYTES,
        operation_class=ImportOperation,
    )
    async def import_config(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        services: Services,
        dry_run: Annotated[bool, QueryParameter(description="Show the plan; change nothing.")] = False,
        accept_losses: Annotated[
            bool, QueryParameter(description="Import even though some parts cannot be honoured (listed).")
        ] = False,
        if_match: IfMatch = None,
    ) -> RoutingImport:
        """Import an Alertmanager configuration (YAML body) as notifiers and the routing document: every field
        Beacon cannot honour is listed (`losses`, by its path in the YAML), and the import is refused (409
        `losses_not_accepted`) unless `accept_losses=true`. Notifiers are found again by name, so importing the
        same file twice changes nothing the second time. Needs `routing:write` and `notifiers:write`."""
        _check_yaml_type(request)
        body = await request.body()
        return await importing.import_config(
            db,
            services.routing_env,
            services.notifier_env,
            principal(request),
            body,
            dry_run=dry_run,
            accept_losses=accept_losses,
            if_match=if_match,
        )

    @post("/test", status_code=200, opt=requires("routing:read"))
    async def test(
        self, request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: RoutingTestRequest
    ) -> RoutingTestOut:
        """Which routes, notifiers and group an alert with these labels would get, and whether it would be
        silenced, inhibited or muted now; nothing is stored or sent."""
        work = service.test_routing(db, services.routing_env, principal(request), data.labels)
        found: RoutingTestOut = await view(request, services, work, "Testing the labels")
        return found

    @get("/status", opt=requires("routing:read"))
    async def status(self, request: Request[Any, Any, Any], db: AsyncSession, services: Services) -> RoutingStatus:
        """Routing status.

        The document's version, counts of alerts, groups and silences, and the router's counters. Needs
        `routing:read`."""
        return await service.status(db, services.routing_env, principal(request))

"""Alerts, silences and the routing document: /v1/alerts, /v1/silences, /v1/routing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UnsetType

from beacon_client.call import Call, TimeArg, decode, json_call, names, query_string, segment
from beacon_client.models import Alert, AlertGroup, AlertsReceived, Page, Routing, RoutingImport, RoutingTest, Silence

_encoder = msgspec.json.Encoder()


def _filtered(filters: str | Iterable[str] | None, **values: str | int | None) -> tuple[tuple[str, str], ...]:
    """Query parameters with `filter` repeated, one matcher each (a matcher may hold a comma)."""
    return (*(("filter", m) for m in names(filters or ())), *query_string(**values).items())


def list_alerts(
    *,
    filters: str | Iterable[str] | None = None,
    state: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[Page[Alert]]:
    """Alerts newest first; `filters` are matchers such as `team="payments"` (all must hold), `state` is
    firing, suppressed or resolved."""
    params = _filtered(filters, state=state, limit=limit, cursor=cursor)
    return Call("GET", "/v1/alerts", decode(Page[Alert]), params=params)


def get_alert(fingerprint: str) -> Call[Alert]:
    return Call("GET", f"/v1/alerts/{segment(fingerprint)}", decode(Alert))


def alert_groups(*, filters: str | Iterable[str] | None = None, state: str | None = None) -> Call[Page[AlertGroup]]:
    """The groups the routing tree forms of the alerts now (firing and suppressed unless `state` says)."""
    return Call("GET", "/v1/alerts/groups", decode(Page[AlertGroup]), params=_filtered(filters, state=state))


def post_alerts(alerts: Sequence[Mapping[str, Any]]) -> Call[AlertsReceived]:
    """Alerts from outside: `{labels, annotations?, starts_at?, ends_at?, generator_url?}` each. Without
    `ends_at` one resolves 5 minutes after it was last posted."""
    body = _encoder.encode([dict(a) for a in alerts])
    return Call(
        "POST", "/v1/alerts", decode(AlertsReceived), content=body, headers={"Content-Type": "application/json"}
    )


def create_silence(
    matchers: str | Iterable[str],
    ends_at: TimeArg,
    comment: str,
    *,
    starts_at: TimeArg | UnsetType = msgspec.UNSET,
    created_by: str | UnsetType = msgspec.UNSET,
) -> Call[Silence]:
    return json_call(
        "POST",
        "/v1/silences",
        decode(Silence),
        matchers=names(matchers),
        ends_at=ends_at,
        comment=comment,
        starts_at=starts_at,
        created_by=created_by,
    )


def list_silences(
    *, state: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Call[Page[Silence]]:
    """Silences newest first; `state` is pending, active or expired."""
    return Call(
        "GET", "/v1/silences", decode(Page[Silence]), params=query_string(state=state, limit=limit, cursor=cursor)
    )


def get_silence(silence_id: str) -> Call[Silence]:
    return Call("GET", f"/v1/silences/{segment(silence_id)}", decode(Silence))


def update_silence(
    silence_id: str,
    *,
    matchers: str | Iterable[str] | UnsetType = msgspec.UNSET,
    starts_at: TimeArg | UnsetType = msgspec.UNSET,
    ends_at: TimeArg | UnsetType = msgspec.UNSET,
    comment: str | UnsetType = msgspec.UNSET,
) -> Call[Silence]:
    """Change a pending or active silence (an expired one is a 409)."""
    return json_call(
        "PATCH",
        f"/v1/silences/{segment(silence_id)}",
        decode(Silence),
        matchers=matchers if isinstance(matchers, UnsetType) else names(matchers),
        starts_at=starts_at,
        ends_at=ends_at,
        comment=comment,
    )


def expire_silence(silence_id: str) -> Call[Silence]:
    """End the silence now (it is kept, as expired)."""
    return Call("DELETE", f"/v1/silences/{segment(silence_id)}", decode(Silence))


def get_routing() -> Call[Routing]:
    return Call("GET", "/v1/routing", decode(Routing))


def put_routing(document: Mapping[str, Any], version: str) -> Call[Routing]:
    """Replace the routing document (`route`, `inhibit_rules`, `time_intervals`) if `version` is still the
    current one (else 412 `version_conflict`)."""
    body = _encoder.encode({k: v for k, v in document.items() if k not in ("object", "version")})
    headers = {"Content-Type": "application/json", "If-Match": version}
    return Call("PUT", "/v1/routing", decode(Routing), content=body, headers=headers)


def test_routing(labels: Mapping[str, str]) -> Call[RoutingTest]:
    """Which routes, notifiers and group an alert with these labels would get, and whether it would be
    silenced, inhibited or muted now; nothing is sent."""
    return json_call("POST", "/v1/routing/test", decode(RoutingTest), labels=dict(labels))


def import_routing(
    config: str | bytes, *, dry_run: bool = False, accept_losses: bool = False, version: str | None = None
) -> Call[RoutingImport]:
    """Import an Alertmanager configuration (its YAML) as notifiers and the routing document; `dry_run` shows the
    plan and changes nothing, `accept_losses` imports even though some parts cannot be honoured (else a 409
    `losses_not_accepted` lists them), `version` applies it only to that version of the document. `*_file`
    secrets are not read by the service: put their content in the field itself (`beacon routing import` does)."""
    body = config.encode() if isinstance(config, str) else config
    params = query_string(dry_run=dry_run or None, accept_losses=accept_losses or None)
    headers = {"Content-Type": "application/yaml", **({"If-Match": version} if version is not None else {})}
    return Call("POST", "/v1/routing/import", decode(RoutingImport), params=params, content=body, headers=headers)

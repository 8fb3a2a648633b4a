"""What /api/v2 does, as calls to app/routing: alerts, groups, silences (with Alertmanager's update rules),
receivers and status."""

from __future__ import annotations

import platform
import socket
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from typing import Any

import msgspec
import re2
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import require_unlimited
from app.amapi import schemas as am
from app.amapi.amconfig import config_yaml, receiver_names
from app.amapi.errors import ClientContractError
from app.amapi.receivers import notifier_names, receiver_name, receivers_of
from app.amapi.translate import (
    alert_post,
    gettable_alert,
    gettable_silence,
    matcher_text,
    parse_filters,
    silence_matches_filter,
    sorted_silences,
)
from app.auth import Principal
from app.db.engine import driver_connection
from app.db.silence import Silence
from app.errors import BeaconError
from app.pace import Pace
from app.routing import service, silences, views
from app.routing.env import RoutingEnv
from app.routing.matchers import compile_regex
from app.routing.schemas import SilenceCreate, SilenceUpdate
from app.timefmt import iso_ms
from app.timeparams import to_ms


def _convert(data: dict[str, Any], type_: type[Any]) -> Any:
    """A Beacon request body from translated fields, checked as if it had been posted to /v1."""
    try:
        return msgspec.convert(data, type=type_)
    except msgspec.ValidationError as exc:
        raise BeaconError("invalid_field", str(exc)) from None


async def post_alerts(session: AsyncSession, env: RoutingEnv, who: Principal, alerts: list[am.PostableAlert]) -> None:
    service.check_alerts_post(who, len(alerts))  # before the alerts are translated: a refused token costs nothing
    await service.store_alerts(session, env, [alert_post(i, a) for i, a in enumerate(alerts)])


@dataclass
class AlertQuery:
    """Alertmanager's filters: `active`, `silenced`, `inhibited` false leave those alerts out."""

    filters: list[str] | None = None
    active: bool = True
    silenced: bool = True
    inhibited: bool = True
    receiver: str | None = None

    def alert_filter(self) -> views.AlertFilter:
        return views.AlertFilter(
            matchers=parse_filters(self.filters),
            states={"firing", "suppressed"} if self.active else {"suppressed"},  # resolved ones are not listed
            silenced=None if self.silenced else False,
            inhibited=None if self.inhibited else False,
        )

    def receiver_regex(self) -> Any:
        if self.receiver is None:
            return None
        try:
            return compile_regex(self.receiver)  # used with fullmatch: anchored, as Alertmanager's is
        except re2.error:
            raise BeaconError(
                "invalid_parameter", f"failed to parse receiver param: {self.receiver!r}", param="receiver"
            ) from None


async def list_alerts(session: AsyncSession, env: RoutingEnv, who: Principal, q: AlertQuery) -> list[am.GettableAlert]:
    flt, regex = q.alert_filter(), q.receiver_regex()
    sup = await service.suppressor(session, env.now(), who)
    names = await notifier_names(session)
    found = []
    async for alert, _ in views.scan(await driver_connection(session), who, sup, flt):
        receivers = receivers_of(sup.routes.of(alert.labels, alert.source.monitor_id), names)
        if regex is None or any(regex.fullmatch(r) for r in receivers):
            found.append(gettable_alert(alert, receivers))
    return found


async def alert_groups(session: AsyncSession, env: RoutingEnv, who: Principal, q: AlertQuery) -> list[am.AlertGroup]:
    flt, regex = q.alert_filter(), q.receiver_regex()
    sup = await service.suppressor(session, env.now(), who)
    names = await notifier_names(session)
    found = []
    pace = Pace()
    for group in await views.groups(await driver_connection(session), who, sup, flt):
        receiver = receiver_name(group.notifier_ids, names)
        if regex is not None and not regex.fullmatch(receiver):
            continue
        alerts = []
        for a in group.alerts:
            alerts.append(gettable_alert(a, receivers_of(sup.routes.of(a.labels, a.source.monitor_id), names)))
            await pace.tick()
        found.append(am.AlertGroup(labels=group.labels, receiver=am.Receiver(receiver), alerts=alerts))
    return found


async def list_silences(
    session: AsyncSession, env: RoutingEnv, who: Principal, filters: list[str] | None
) -> list[am.GettableSilence]:
    flt = parse_filters(filters)
    found = [s for s in await silences.all_silences(session, who, env.now()) if silence_matches_filter(s, flt)]
    return [gettable_silence(s) for s in sorted_silences(found)]


def _not_found(silence_id: str) -> str:
    return f"silence {silence_id} not found"  # Alertmanager's words, which amtool's `silence import` looks for


async def _silence(
    session: AsyncSession, silence_id: str, *, for_update: bool = False, who: Principal | None = None
) -> Silence:
    """The silence (`who`: as that token may see it), or Alertmanager's words for an unknown one."""
    try:
        if who is not None:
            return await silences.get_visible(session, who, silence_id)
        return await silences.get(session, silence_id, for_update=for_update)
    except BeaconError as exc:
        if exc.code == "not_found":
            raise BeaconError("not_found", _not_found(silence_id)) from None
        raise


async def get_silence(session: AsyncSession, env: RoutingEnv, who: Principal, silence_id: str) -> am.GettableSilence:
    return gettable_silence(silences.to_out(await _silence(session, silence_id, who=who), env.now()))


def _can_update(old: Silence, matchers: list[str], starts_at: datetime, ends_at: datetime, now: datetime) -> bool:
    """Alertmanager's rule for changing a silence in place; otherwise it is expired and a new one replaces it."""
    if list(old.matchers) != matchers:
        return False
    state = silences.state_of(old, now)
    if state == "active":
        return starts_at == old.starts_at and ends_at >= now
    return state == "pending" and starts_at >= now


async def post_silence(
    session: AsyncSession, env: RoutingEnv, who: Principal, data: am.PostableSilence
) -> am.SilenceCreated:
    require_unlimited(who, "silences")  # before the body is read or the old silence locked: a refusal costs nothing
    if not data.matchers:
        raise BeaconError("invalid_field", "silence has no matchers", param="matchers")
    # Beacon's matcher text, written without compiling a regex: the sizes are checked first (as a /v1 body), and
    # silences.create compiles each matcher once.
    starts_at, ends_at = to_ms(data.starts_at), to_ms(data.ends_at)
    body = {
        "matchers": [matcher_text(m) for m in data.matchers],
        "starts_at": starts_at,
        "ends_at": ends_at,
        "comment": data.comment,
    }
    if data.created_by:
        body["created_by"] = data.created_by
    new: SilenceCreate = _convert(body, SilenceCreate)
    now = env.now()
    old = None
    if data.id:
        old = await _silence(session, data.id, for_update=True)
        if _can_update(old, new.matchers, starts_at, ends_at, now):  # the old matchers, checked already
            update = _convert({"ends_at": ends_at, "comment": data.comment}, SilenceUpdate)
            if silences.state_of(old, now) == "pending":
                update.starts_at = starts_at
            await silences.update(session, who, old.id, update, now)
            return am.SilenceCreated(old.id)
    # The old one is expired only together with its replacement, once that has passed every check.
    created = await silences.create(session, who, new, now, replacing=old)
    return am.SilenceCreated(created.id)


async def delete_silence(session: AsyncSession, env: RoutingEnv, who: Principal, silence_id: str) -> None:
    """Expire a silence. An unknown id is Alertmanager's answer, a 500 "silence not found": the only status
    besides 200 its API defines here, so the only one whose message amtool prints (to a 404 it says "response
    status code does not match any response statuses")."""
    try:
        await silences.expire(session, who, silence_id, env.now())
    except BeaconError as exc:
        if exc.code == "not_found":
            raise ClientContractError(500, _not_found(silence_id)) from None
        raise


async def receivers(session: AsyncSession) -> list[am.Receiver]:
    doc = await service.get_routing(session)
    return [am.Receiver(name) for name in receiver_names(doc, await notifier_names(session))]


# amtool warns on every command when the server's version is not its own: Beacon reports the Alertmanager
# version whose API it serves, and its own version as the revision.
API_VERSION = "0.25.0"


def _version() -> am.VersionInfo:
    try:
        beacon = metadata.version("beacon")
    except metadata.PackageNotFoundError:
        beacon = "unknown"
    return am.VersionInfo(
        version=API_VERSION,
        revision=f"beacon-{beacon}",
        branch="beacon",
        build_user="beacon",
        build_date="unknown",
        go_version=f"python{platform.python_version()}",  # a field amtool shows; Beacon runs on Python
    )


async def status(session: AsyncSession, started_at: datetime) -> am.AlertmanagerStatus:
    doc = await service.get_routing(session)
    return am.AlertmanagerStatus(
        # No gossip cluster: every `beacon serve` on one database shares the alerts, silences and groups.
        cluster=am.ClusterStatus(name=socket.gethostname(), status="disabled", peers=[]),
        version_info=_version(),
        config=am.AlertmanagerConfig(config_yaml(doc, await notifier_names(session))),
        uptime=iso_ms(started_at),
    )

"""Creating, listing, changing and deleting notifiers; sealing their configs; rotating signing secrets."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from msgspec import UNSET
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.base import Adapter
from adapters.contract import AdapterConfig, ConfigError
from adapters.guard import DestinationGuard, DestinationRefused, Resolve
from adapters.registry import AdapterRegistry
from adapters.webhook import new_signing_secret
from app.db.advisory import Space, lock
from app.db.engine import driver_connection
from app.db.notifier import Notifier
from app.errors import BeaconError, not_found
from app.notifiers.schemas import NotifierCreate, NotifierOut, NotifierUpdate, NotifierWithSecret
from app.notifiers.type_names import meant_type
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.request_ids import new_id
from app.routing import config as routing_config
from app.secretbox import SecretBox
from app.settings import Settings
from app.timefmt import iso_ms, iso_ms_or_none, utcnow
from app.timeparams import to_ms

ROTATION_OVERLAP = timedelta(hours=24)
# `disabled_until` of a notifier Beacon disabled by itself: until a person re-enables it (the last day every
# datetime library can represent).
DISABLED_FOR_GOOD = datetime(9999, 12, 31, tzinfo=UTC)


def gone_reason(delivery_id: str, at: datetime) -> str:
    """What a notifier disabled by a 410 Gone says about it (its `disabled_reason`)."""
    return (
        f"disabled by Beacon: the endpoint answered 410 Gone at {iso_ms(at)} (delivery {delivery_id}), which says it "
        'takes no more messages; once it is back, re-enable the notifier with PATCH {"disabled_until": null}'
    )


@dataclass(frozen=True)
class NotifierEnv:
    """What the notifier service needs from the running app (built once, with the app's Services)."""

    registry: AdapterRegistry
    box: SecretBox
    guard: DestinationGuard


def build_notifier_env(
    settings: Settings, *, resolve: Resolve | None = None, guard: DestinationGuard | None = None
) -> NotifierEnv:
    """`resolve`: the DNS of the private-network guard (the system's when None); `guard`: the guard itself, made
    by the caller instead (the fuzz run's, which sends to loopback only)."""
    assert settings.secret_key
    if guard is None:
        guard = DestinationGuard(allow_private=settings.allow_private_destinations)
        guard = guard if resolve is None else guard.with_resolver(resolve)
    return NotifierEnv(registry=AdapterRegistry.discover(), box=SecretBox(settings.secret_key), guard=guard)


class PreviousSecret(msgspec.Struct):
    secret: str
    expires_at: datetime


class Sealed(msgspec.Struct):
    """The plaintext of `notifiers.config_sealed`."""

    config: dict[str, Any]
    previous_secrets: list[PreviousSecret] = []


def to_out(n: Notifier) -> NotifierOut:
    return NotifierOut(**_fields(n))


def _fields(n: Notifier) -> dict[str, Any]:
    return {
        "id": n.id,
        "name": n.name,
        "type": n.type,
        "target": n.target,
        "send_resolved": n.send_resolved,
        "disabled_until": iso_ms_or_none(n.disabled_until),
        "disabled_reason": n.disabled_reason,
        "created_at": iso_ms(n.created_at),
        "updated_at": iso_ms(n.updated_at),
    }


def _context(notifier_id: str) -> str:
    return f"notifier:{notifier_id}"


def seal(env: NotifierEnv, notifier_id: str, sealed: Sealed) -> bytes:
    return env.box.seal(msgspec.json.encode(sealed), _context(notifier_id))


def unseal(env: NotifierEnv, notifier: Notifier) -> Sealed:
    return msgspec.json.decode(env.box.open(notifier.config_sealed, _context(notifier.id)), type=Sealed)


def adapter_for(env: NotifierEnv, type_: str) -> type[Adapter[Any]]:
    try:
        return env.registry[type_]
    except KeyError:
        types = env.registry.types()
        meant = meant_type(type_, types)
        hint = f" Did you mean {meant!r}, {env.registry[meant].description}?" if meant else ""
        raise BeaconError(
            "invalid_field",
            f"Unknown notifier type {type_!r}.{hint} The types are {', '.join(types)}.",
            param="type",
        ) from None


def config_of(env: NotifierEnv, notifier: Notifier) -> AdapterConfig:
    """The stored config as the adapter's typed Config (for sending)."""
    return adapter_for(env, notifier.type).validate(unseal(env, notifier).config)


async def _validated(env: NotifierEnv, adapter: type[Adapter[Any]], raw: Any) -> AdapterConfig:
    try:
        config = adapter.validate(raw)
    except ConfigError as exc:
        raise BeaconError("missing_field" if exc.missing else "invalid_field", exc.message, param=exc.param) from None
    for key, url in adapter.destinations(config).items():
        try:
            await env.guard.check_url(url)
        except DestinationRefused as exc:
            raise BeaconError("invalid_field", f"`config.{key}`: {exc}.", param=f"config.{key}") from None
    return config


async def validated_config(env: NotifierEnv, type_: str, raw: Any) -> tuple[type[Adapter[Any]], AdapterConfig]:
    """The adapter of `type_` and `raw` checked by it (destinations included): a 400 naming `config.<key>`."""
    adapter = adapter_for(env, type_)
    return adapter, await _validated(env, adapter, raw)


async def create_notifier(session: AsyncSession, env: NotifierEnv, data: NotifierCreate) -> NotifierWithSecret:
    adapter, config = await validated_config(env, data.type, data.config)
    notifier, shown_secret = add_notifier(session, env, data, adapter, config)
    await _commit_named(session, data.name)
    return NotifierWithSecret(**_fields(notifier), signing_secret=shown_secret)


def add_notifier(
    session: AsyncSession, env: NotifierEnv, data: NotifierCreate, adapter: type[Adapter[Any]], config: AdapterConfig
) -> tuple[Notifier, str | msgspec.UnsetType]:
    """Add the notifier `data` describes, its config already validated as `config`, to the session's
    transaction (the caller commits); returns it and its webhook signing secret, to be shown once."""
    shown_secret: str | msgspec.UnsetType = UNSET
    if adapter.has_signing_secret:
        if getattr(config, "signing_secret", None) is None:
            config = msgspec.structs.replace(config, signing_secret=new_signing_secret())
        shown_secret = config.signing_secret  # type: ignore[attr-defined]
    now = utcnow()
    notifier_id = new_id("ntf_")
    notifier = Notifier(
        id=notifier_id,
        name=data.name,
        type=adapter.type,
        target=adapter.target(config),
        config_sealed=seal(env, notifier_id, Sealed(config=config.to_dict())),
        disabled_until=to_ms(data.disabled_until) if data.disabled_until else None,
        send_resolved=adapter.send_resolved if data.send_resolved is None else data.send_resolved,
        created_at=now,
        updated_at=now,
    )
    session.add(notifier)
    return notifier, shown_secret


# The unique index on notifiers.name (migration 0024).
NAME_INDEX = "notifiers_name"


async def _commit_named(session: AsyncSession, name: str) -> None:
    """Commit a notifier's name: one in use is a 409 naming the notifier that has it (names are unique, as
    Alertmanager's receiver names are: a name is how people and `/api/v2` pick a notifier)."""
    try:
        await session.commit()
    except IntegrityError as exc:
        await session.rollback()
        if NAME_INDEX not in str(exc.orig):
            raise
        holder = (await session.execute(select(Notifier.id).where(Notifier.name == name))).scalar_one_or_none()
        raise BeaconError(
            "conflict",
            f"A notifier named {name!r} exists already ({holder or 'just made'}); notifier names are unique: "
            "choose another name, or change that notifier.",
            param="name",
        ) from None


async def get_notifier(session: AsyncSession, notifier_id: str, *, for_update: bool = False) -> Notifier:
    """`for_update`: held until the transaction ends (an advisory lock on its id: on Citus `notifiers` is a
    reference table, where a row lock would lock them all) and read once held."""
    if for_update:
        await lock(session, Space.NOTIFIER, notifier_id)
    stmt = select(Notifier).where(Notifier.id == notifier_id)
    notifier = (await session.execute(stmt)).scalar_one_or_none()
    if notifier is None:
        raise not_found("notifier", notifier_id)
    return notifier


async def names_of(session: AsyncSession, ids: Iterable[str]) -> dict[str, str]:
    """The names of the notifiers among `ids`, in one query (an id no notifier has any more is left out)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await (await driver_connection(session)).fetch(
        "SELECT id, name FROM notifiers WHERE id = ANY($1::text[])", wanted
    )
    return {r["id"]: r["name"] for r in rows}


async def list_notifiers(
    session: AsyncSession, codec: CursorCodec, *, type_: str | None, limit: int | None, cursor: str | None
) -> ListEnvelope[NotifierOut]:
    stmt = select(Notifier)
    if type_ is not None:
        stmt = stmt.where(Notifier.type == type_)
    return await paginate(
        session,
        stmt,
        codec=codec,
        scope=f"notifiers:{msgspec.json.encode([type_]).decode()}",
        keys=(Notifier.created_at, Notifier.id),
        render=to_out,
        limit=limit,
        cursor=cursor,
    )


async def update_notifier(
    session: AsyncSession, env: NotifierEnv, notifier_id: str, data: NotifierUpdate
) -> NotifierOut:
    notifier = await get_notifier(session, notifier_id, for_update=True)
    if data.config is not UNSET:
        adapter = adapter_for(env, notifier.type)
        if "signing_secret" in data.config:
            raise BeaconError(
                "invalid_field",
                "The signing secret cannot be changed here; use POST /v1/notifiers/{id}/rotate-secret.",
                param="config.signing_secret",
            )
        merged = {**unseal(env, notifier).config, **data.config}
        merged = {k: v for k, v in merged.items() if v is not None}
        replace_config(env, notifier, adapter, await _validated(env, adapter, merged))
    if data.name is not UNSET:
        notifier.name = data.name
    if data.disabled_until is not UNSET:
        # A person decides now: whatever Beacon had disabled it for no longer holds.
        notifier.disabled_until = to_ms(data.disabled_until) if data.disabled_until else None
        notifier.disabled_reason = None
    if data.send_resolved is not UNSET:
        notifier.send_resolved = data.send_resolved
    notifier.updated_at = utcnow()
    out = to_out(notifier)  # read before the commit, whose failure expires the object
    await _commit_named(session, notifier.name)
    return out


def replace_config(env: NotifierEnv, notifier: Notifier, adapter: type[Adapter[Any]], config: AdapterConfig) -> None:
    """Seal `config` (validated) as the notifier's; the previous signing secrets stay (their overlap runs on)."""
    sealed = unseal(env, notifier)
    sealed.config = config.to_dict()
    notifier.config_sealed = seal(env, notifier.id, sealed)
    notifier.target = adapter.target(config)


async def rotate_secret(session: AsyncSession, env: NotifierEnv, notifier_id: str) -> NotifierWithSecret:
    notifier = await get_notifier(session, notifier_id, for_update=True)
    if not adapter_for(env, notifier.type).has_signing_secret:
        raise BeaconError(
            "unsupported_operation", f"A notifier of type {notifier.type!r} has no signing secret to rotate."
        )
    now = utcnow()
    sealed = unseal(env, notifier)
    old = sealed.config.get("signing_secret")
    expires_at = now + ROTATION_OVERLAP
    # The old secret keeps signing for the overlap, so receivers can switch without missing a message.
    kept = [p for p in sealed.previous_secrets if p.expires_at > now]
    if old:
        kept.append(PreviousSecret(secret=old, expires_at=expires_at))
    new = new_signing_secret()
    sealed.config["signing_secret"] = new
    sealed.previous_secrets = kept
    notifier.config_sealed = seal(env, notifier.id, sealed)
    notifier.updated_at = now
    await session.commit()
    return NotifierWithSecret(**_fields(notifier), signing_secret=new, previous_secret_expires_at=iso_ms(expires_at))


async def delete_notifier(session: AsyncSession, notifier_id: str) -> None:
    notifier = await get_notifier(session, notifier_id, for_update=True)
    await routing_config.check_unused(await driver_connection(session), notifier_id)  # after the lock above
    await session.delete(notifier)
    try:
        await session.commit()
    except IntegrityError:  # the routing document named it meanwhile (routing_notifiers: ON DELETE RESTRICT)
        await session.rollback()
        raise BeaconError("conflict", "The routing document sends to this notifier; remove it there first.") from None


def signing_secrets(env: NotifierEnv, notifier: Notifier, now: datetime) -> list[str]:
    """Every secret that signs now: the current one first, then those in their rotation overlap."""
    sealed = unseal(env, notifier)
    current = sealed.config.get("signing_secret")
    return [s for s in [current, *(p.secret for p in sealed.previous_secrets if p.expires_at > now)] if s]

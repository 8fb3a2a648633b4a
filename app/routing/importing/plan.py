"""What an import would change here: each notifier checked as its adapter checks it (a 400 names the place in
the YAML), then found again by name (`keep` when it is already as asked, `update` when its settings differ,
`create` when none has the name), and the document compared with the stored one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.base import Adapter
from adapters.contract import AdapterConfig
from app.db.advisory import Space, lock_all
from app.db.engine import driver_connection
from app.db.notifier import Notifier
from app.errors import BeaconError
from app.notifiers.service import NotifierEnv, unseal, validated_config
from app.routing import config as routing_config
from app.routing import document as d
from app.routing.importing.draft import Draft
from app.routing.importing.losses import Loss
from app.routing.importing.receivers import DraftNotifier
from app.routing.tree import compile_document

Action = Literal["create", "update", "keep"]
NEW = "new:"  # a notifier id not given yet (a dry run's document names the notifier instead)


@dataclass
class Checked:
    """A notifier the configuration asks for, its config validated by its adapter."""

    draft: DraftNotifier
    adapter: type[Adapter[Any]]
    config: AdapterConfig


@dataclass
class Planned:
    checked: Checked
    action: Action
    existing: Notifier | None

    @property
    def id(self) -> str | None:
        return self.existing.id if self.existing is not None else None


@dataclass
class Plan:
    notifiers: list[Planned]
    document: d.Document  # naming notifiers by id, `new:<name>` for those not created yet
    document_changed: bool
    resolve_timeout_seconds: int
    losses: list[Loss]


async def check(env: NotifierEnv, draft: Draft) -> tuple[list[Checked], list[Loss]]:
    """Each notifier validated (no database), and the draft's losses."""
    checked = []
    losses = list(draft.losses)
    for notifier in draft.notifiers:
        try:
            adapter, config = await validated_config(env, notifier.type, notifier.config)
        except BeaconError as exc:
            key = (exc.param or "").removeprefix("config.").split("[")[0]
            where = notifier.fields.get(key, notifier.source)
            raise BeaconError(exc.code, f"`{where}`: {exc.message}", param=where) from None
        checked.append(Checked(notifier, adapter, config))
    return checked, losses


def _comparable(config: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != "signing_secret"}


async def _existing(session: AsyncSession, names: Iterable[str], *, for_update: bool) -> dict[str, Notifier]:
    stmt = select(Notifier).where(Notifier.name.in_(sorted(set(names)))).order_by(Notifier.created_at)
    if for_update:
        # Held as get_notifier(for_update=True) holds one (advisory locks: `notifiers` is a reference table on
        # Citus), then read again once held.
        await lock_all(session, Space.NOTIFIER, (await session.execute(stmt.with_only_columns(Notifier.id))).scalars())
        stmt = stmt.execution_options(populate_existing=True)
    found: dict[str, Notifier] = {}
    for notifier in (await session.execute(stmt)).scalars():
        if notifier.name in found:
            raise BeaconError(
                "conflict",
                f"Two notifiers are named {notifier.name!r} ({found[notifier.name].id}, {notifier.id}), so the "
                "import cannot tell which one the receiver is: rename or delete one.",
            )
        found[notifier.name] = notifier
    return found


async def make_plan(
    session: AsyncSession,
    env: NotifierEnv,
    draft: Draft,
    checked: list[Checked],
    losses: list[Loss],
    *,
    for_update: bool,
) -> Plan:
    existing = await _existing(session, (c.draft.name for c in checked), for_update=for_update)
    planned = []
    for item in checked:
        found = existing.get(item.draft.name)
        planned.append(Planned(item, _action(env, item, found), found))
    ids = {p.checked.draft.name: p.id or f"{NEW}{p.checked.draft.name}" for p in planned}
    document = _with_ids(draft.document, ids)
    document = msgspec.structs.replace(document, resolve_timeout_seconds=draft.resolve_timeout_seconds)
    stored = await routing_config.current(await driver_connection(session))
    changed = msgspec.to_builtins(document) != msgspec.to_builtins(stored.tree.document)
    return Plan(planned, document, changed, draft.resolve_timeout_seconds, losses)


def _action(env: NotifierEnv, item: Checked, found: Notifier | None) -> Action:
    if found is None:
        return "create"
    if found.type != item.adapter.type:
        raise BeaconError(
            "conflict",
            f"A notifier named {found.name!r} ({found.id}) exists with type {found.type!r}, and the import would "
            f"make it a {item.adapter.type!r} (from `{item.draft.source}`): rename or delete it first.",
        )
    same_config = _comparable(unseal(env, found).config) == _comparable(item.config.to_dict())
    same_flag = found.send_resolved == item.draft.send_resolved
    return "keep" if same_config and same_flag else "update"


def _with_ids(document: d.Document, ids: Mapping[str, str]) -> d.Document:
    """The document with each notifier name replaced by its id, checked as a whole as `PUT /v1/routing` checks it
    (the ids are checked against the notifiers when it is stored)."""

    def route(raw: d.Route) -> d.Route:
        notifier_ids = None if raw.notifier_ids is None else [ids[name] for name in raw.notifier_ids]
        return msgspec.structs.replace(raw, notifier_ids=notifier_ids, routes=[route(r) for r in raw.routes])

    found = msgspec.structs.replace(document, route=route(document.route))
    try:  # the shapes' own bounds (lengths), as a decoded request body would have them checked
        found = msgspec.convert(msgspec.to_builtins(found), d.Document)
    except msgspec.ValidationError as exc:
        raise BeaconError("invalid_field", f"The routing document made of it is not valid: {exc}.") from None
    compile_document(found)
    return found

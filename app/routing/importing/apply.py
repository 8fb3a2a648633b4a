"""Storing a plan, in the caller's transaction: notifiers created or updated (configs sealed as every notifier's
are), then the document with their ids, written only when it differs from the stored one. The caller holds the
routing document's row lock (taken before the plan was made), so two imports, or an import and a
`PUT /v1/routing`, never interleave."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg
import msgspec
from msgspec import UNSET
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BeaconError
from app.notifiers.schemas import NotifierCreate
from app.notifiers.service import NotifierEnv, add_notifier, replace_config, unseal
from app.routing import config as routing_config
from app.routing import document as d
from app.routing.importing.plan import NEW, Plan, Planned


@dataclass
class Applied:
    ids: dict[str, str]  # notifier name -> id
    version: int
    document: d.Document
    signing_secrets: dict[str, str] = field(default_factory=dict)  # of the webhooks created: shown once


def check_version(stored: routing_config.Stored, if_match: str | None) -> None:
    """With `If-Match`, the import applies only to the version it names (412 otherwise); without, to any."""
    if if_match is None:
        return
    if not if_match.strip():  # a header that names no version: a mistake, not "any version" (that is `*`)
        raise BeaconError(
            "invalid_parameter",
            "`If-Match` is empty: send the `version` from GET /v1/routing, `*`, or no `If-Match` at all.",
            param="If-Match",
        )
    wanted = routing_config.parse_if_match(if_match)
    if wanted != "*" and wanted != str(stored.version):
        raise BeaconError(
            "version_conflict",
            f"The routing document is at version {stored.version}, not {wanted}: someone changed it meanwhile.",
        )


async def apply(
    session: AsyncSession, conn: asyncpg.Connection, env: NotifierEnv, plan: Plan, if_match: str | None, now: datetime
) -> Applied:
    stored = await routing_config.current(conn, for_update=True)
    check_version(stored, if_match)
    applied = Applied({}, stored.version, stored.tree.document)
    for item in plan.notifiers:
        _store_notifier(session, env, item, now, applied)
    await session.flush()  # the new notifiers exist for the document's check below (same transaction)
    document = _with_ids(plan.document, {f"{NEW}{name}": notifier_id for name, notifier_id in applied.ids.items()})
    if msgspec.to_builtins(document) != msgspec.to_builtins(stored.tree.document):
        written = await routing_config.replace(conn, document, "*", now)
        applied.version, applied.document = written.version, document
    return applied


def _store_notifier(session: AsyncSession, env: NotifierEnv, item: Planned, now: datetime, applied: Applied) -> None:
    checked, name = item.checked, item.checked.draft.name
    if item.action == "create":
        data = NotifierCreate(name=name, type=checked.adapter.type, config=checked.config.to_dict())
        notifier, secret = add_notifier(session, env, data, checked.adapter, checked.config)
        if secret is not UNSET:
            applied.signing_secrets[name] = str(secret)
    else:
        assert item.existing is not None
        notifier = item.existing
        if item.action == "update":
            config = checked.config
            if checked.adapter.has_signing_secret:  # the receiver keeps verifying with the secret it knows
                config = msgspec.structs.replace(
                    config, signing_secret=unseal(env, notifier).config.get("signing_secret")
                )
            replace_config(env, notifier, checked.adapter, config)
            notifier.updated_at = now
    if item.action != "keep":
        notifier.send_resolved = checked.draft.send_resolved
    applied.ids[name] = notifier.id


def _with_ids(document: d.Document, ids: Mapping[str, str]) -> d.Document:
    def route(raw: d.Route) -> d.Route:
        named = None if raw.notifier_ids is None else [ids.get(n, n) for n in raw.notifier_ids]
        return msgspec.structs.replace(raw, notifier_ids=named, routes=[route(r) for r in raw.routes])

    return msgspec.structs.replace(document, route=route(document.route))

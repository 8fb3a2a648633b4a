"""`POST /v1/routing/import`: an Alertmanager configuration (YAML) read, planned, and stored unless it is a dry
run, in one transaction (nothing half-stored).

Order of work: the YAML is read off the event loop (a large file takes a moment to parse); the notifiers are
checked as their adapters check them (destinations included) before any database work; losses refuse the
import unless accepted; then, under the routing document's row lock, existing notifiers are found again by
name and the plan is stored.
"""

from __future__ import annotations

import asyncio

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import require_unlimited
from app.auth import Principal
from app.errors import BeaconError
from app.notifiers.service import NotifierEnv
from app.routing import config as routing_config
from app.routing import store
from app.routing.env import RoutingEnv
from app.routing.importing.apply import Applied, apply, check_version
from app.routing.importing.draft import Draft, read_config
from app.routing.importing.losses import Loss
from app.routing.importing.plan import Plan, check, make_plan
from app.routing.importing.schemas import ImportLoss, ImportNotifier, RoutingImport
from app.routing.importing.yamltext import load

MAX_LOSSES_IN_MESSAGE = 50


def _read(body: bytes) -> Draft:
    return read_config(load(body))


async def import_config(
    session: AsyncSession,
    renv: RoutingEnv,
    nenv: NotifierEnv,
    who: Principal,
    body: bytes,
    *,
    dry_run: bool,
    accept_losses: bool,
    if_match: str | None,
) -> RoutingImport:
    require_unlimited(who, "the routing document and notifiers")
    draft = await asyncio.to_thread(_read, body)
    checked, losses = await check(nenv, draft)
    if dry_run:
        plan = await make_plan(session, nenv, draft, checked, losses, for_update=False)
        stored = await routing_config.current(await store.in_transaction(session))
        check_version(stored, if_match)
        return _answer(plan, None, stored.version, dry_run=True)
    if losses and not accept_losses:
        raise _refused(losses)
    conn = await store.in_transaction(session)
    await routing_config.current(conn, for_update=True)  # imports (and PUTs) one at a time from here
    plan = await make_plan(session, nenv, draft, checked, losses, for_update=True)
    applied = await apply(session, conn, nenv, plan, if_match, renv.now())
    await session.commit()
    return _answer(plan, applied, applied.version, dry_run=False)


def _refused(losses: list[Loss]) -> BeaconError:
    shown = "\n".join(f"- {loss.path}: {loss.reason}" for loss in losses[:MAX_LOSSES_IN_MESSAGE])
    more = f"\n… and {len(losses) - MAX_LOSSES_IN_MESSAGE} more" if len(losses) > MAX_LOSSES_IN_MESSAGE else ""
    return BeaconError(
        "losses_not_accepted",
        f"The configuration holds {len(losses)} part{'s' if len(losses) != 1 else ''} Beacon cannot honour; "
        f"nothing was changed:\n{shown}{more}\nImport the rest anyway with accept_losses=true "
        "(`beacon routing import --accept-losses`); dry_run=true shows the whole plan.",
    )


def _answer(plan: Plan, applied: Applied | None, version: int, *, dry_run: bool) -> RoutingImport:
    notifiers = []
    for item in plan.notifiers:
        draft = item.checked.draft
        notifier_id = applied.ids.get(draft.name) if applied is not None else item.id
        secret = applied.signing_secrets.get(draft.name) if applied is not None else None
        notifiers.append(
            ImportNotifier(
                name=draft.name,
                type=item.checked.adapter.type,
                action=item.action,
                id=notifier_id,
                receiver=draft.receiver,
                source=draft.source,
                target=item.checked.adapter.target(item.checked.config),
                send_resolved=draft.send_resolved,
                **({"signing_secret": secret} if secret else {}),
            )
        )
    stored_anything = applied is not None and (
        plan.document_changed or any(item.action != "keep" for item in plan.notifiers)
    )
    return RoutingImport(
        dry_run=dry_run,
        applied=stored_anything,
        document_changed=plan.document_changed,
        version=str(version),
        notifiers=notifiers,
        document=msgspec.structs.replace(
            applied.document if applied is not None else plan.document,
            object="routing",
            version=str(version) if applied is not None else None,
        ),
        resolve_timeout_seconds=plan.resolve_timeout_seconds,
        losses=[ImportLoss(path=loss.path, reason=loss.reason) for loss in plan.losses],
    )

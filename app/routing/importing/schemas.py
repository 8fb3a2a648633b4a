"""The answer of `POST /v1/routing/import`: the plan, and what was stored when it was applied."""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from app.routing.document import Document


class ImportLoss(msgspec.Struct, kw_only=True):
    path: str  # where it is in the YAML, e.g. receivers[2].slack_configs[0].channel
    reason: str


class ImportNotifier(msgspec.Struct, kw_only=True):
    """A notifier the configuration asks for (one per integration); its settings are never shown (secrets)."""

    name: str
    type: str
    action: Literal["create", "update", "keep"]
    id: str | None  # None: not created yet (a dry run)
    receiver: str
    source: str  # the integration in the YAML: receivers[0].webhook_configs[0]
    target: str  # where it sends, secret-free (as GET /v1/notifiers shows it)
    send_resolved: bool
    signing_secret: str | UnsetType = UNSET  # a webhook created now: its signing secret, shown this once


class RoutingImport(msgspec.Struct, kw_only=True):
    object: str = "routing_import"
    dry_run: bool
    applied: bool  # something was stored (false on a dry run, and when nothing differed)
    document_changed: bool
    version: str  # the routing document's version after the import (the current one on a dry run)
    notifiers: list[ImportNotifier]
    document: Document  # a dry run names the notifiers not created yet `new:<name>`
    resolve_timeout_seconds: int  # Alertmanager's global.resolve_timeout
    losses: list[ImportLoss]

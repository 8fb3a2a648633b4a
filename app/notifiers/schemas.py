from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from app.schemas import AwareDatetime, RequestBody

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
TypeName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class NotifierCreate(RequestBody):
    name: Name
    type: TypeName
    config: dict[str, Any]
    disabled_until: AwareDatetime | None = None
    send_resolved: bool | None = None  # None: the type's default (Alertmanager's)


class NotifierUpdate(RequestBody):
    """Partial update. `config` is merged key by key into the stored one (a key set to null is removed) and
    the result is validated again as a whole; `disabled_until: null` re-enables (also a notifier Beacon disabled
    by itself, see `disabled_reason`)."""

    name: Name | UnsetType = UNSET
    config: dict[str, Any] | UnsetType = UNSET
    disabled_until: AwareDatetime | UnsetType | None = UNSET
    send_resolved: bool | UnsetType = UNSET


class NotifierOut(msgspec.Struct, kw_only=True):
    """`config` is never echoed: it holds the secrets."""

    object: str = "notifier"
    id: str
    name: str
    type: str
    target: str
    send_resolved: bool
    disabled_until: str | None
    # Set when Beacon disabled the notifier by itself (a webhook answered 410 Gone): why, and how to re-enable it.
    disabled_reason: str | None = None
    created_at: str
    updated_at: str


class NotifierWithSecret(NotifierOut, kw_only=True):
    """The 201 body (and the rotate-secret answer): a webhook's signing secret, shown this once."""

    signing_secret: str | UnsetType = UNSET
    previous_secret_expires_at: str | UnsetType = UNSET

"""Alertmanager's API v2 shapes (its `api/v2/openapi.yaml`), in its camelCase field names.

Bodies posted here are Alertmanager's clients' (Prometheus, amtool): fields this API does not know are ignored,
as Alertmanager's own server does, rather than refused as on /v1.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from app.schemas import AwareDatetime

LabelSet = dict[str, str]


class PostableAlert(msgspec.Struct, kw_only=True):
    labels: LabelSet
    annotations: LabelSet = msgspec.field(default_factory=dict)
    starts_at: AwareDatetime | None = msgspec.field(default=None, name="startsAt")
    ends_at: AwareDatetime | None = msgspec.field(default=None, name="endsAt")
    generator_url: Annotated[str, msgspec.Meta(max_length=2048)] | None = msgspec.field(
        default=None, name="generatorURL"
    )


class Matcher(msgspec.Struct, kw_only=True):
    name: str
    value: str
    is_regex: bool = msgspec.field(name="isRegex")
    is_equal: bool = msgspec.field(default=True, name="isEqual")


class PostableSilence(msgspec.Struct, kw_only=True):
    id: str | None = None
    matchers: list[Matcher]
    starts_at: AwareDatetime = msgspec.field(name="startsAt")
    ends_at: AwareDatetime = msgspec.field(name="endsAt")
    created_by: str = msgspec.field(default="", name="createdBy")
    comment: str = ""


class SilenceStatus(msgspec.Struct):
    state: str  # expired | active | pending


class GettableSilence(msgspec.Struct, kw_only=True):
    id: str
    status: SilenceStatus
    updated_at: str = msgspec.field(name="updatedAt")
    matchers: list[Matcher]
    starts_at: str = msgspec.field(name="startsAt")
    ends_at: str = msgspec.field(name="endsAt")
    created_by: str = msgspec.field(name="createdBy")
    comment: str


class SilenceCreated(msgspec.Struct):
    silenceID: str


# gc=False: one (or three) per alert of a view; see app/routing/schemas.py's AlertOut.
class Receiver(msgspec.Struct, gc=False):
    name: str


class AlertStatus(msgspec.Struct, kw_only=True, gc=False):
    state: str  # unprocessed | active | suppressed
    silenced_by: list[str] = msgspec.field(name="silencedBy")
    inhibited_by: list[str] = msgspec.field(name="inhibitedBy")
    muted_by: list[str] = msgspec.field(name="mutedBy")  # Alertmanager 0.27's field: time intervals


class GettableAlert(msgspec.Struct, kw_only=True, gc=False):
    labels: LabelSet
    annotations: LabelSet
    receivers: list[Receiver]
    fingerprint: str
    starts_at: str = msgspec.field(name="startsAt")
    updated_at: str = msgspec.field(name="updatedAt")
    ends_at: str = msgspec.field(name="endsAt")
    status: AlertStatus
    generator_url: str = msgspec.field(name="generatorURL")


class AlertGroup(msgspec.Struct, kw_only=True, gc=False):
    labels: LabelSet
    receiver: Receiver
    alerts: list[GettableAlert]


class PeerStatus(msgspec.Struct):
    name: str
    address: str


class ClusterStatus(msgspec.Struct, kw_only=True):
    name: str
    status: str  # ready | settling | disabled
    peers: list[PeerStatus]


class VersionInfo(msgspec.Struct, kw_only=True):
    version: str
    revision: str
    branch: str
    build_user: str = msgspec.field(name="buildUser")
    build_date: str = msgspec.field(name="buildDate")
    go_version: str = msgspec.field(name="goVersion")


class AlertmanagerConfig(msgspec.Struct):
    original: str


class AlertmanagerStatus(msgspec.Struct, kw_only=True):
    cluster: ClusterStatus
    version_info: VersionInfo = msgspec.field(name="versionInfo")
    config: AlertmanagerConfig
    uptime: str

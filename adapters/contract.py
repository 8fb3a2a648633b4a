"""The plugin contract's data: what an adapter is given and what it gives back, with no web framework, database
driver or template engine behind it (stdlib and msgspec only; tests/unit/test_plugin_contract.py keeps it so).

- a notifier's `Config`: an `AdapterConfig` Struct whose fields typed `Secret` are stored encrypted and masked
  everywhere; a config that does not fit is a `ConfigError` naming its key;
- the `Event` every message is rendered from (a monitor's change, a routed group notification, a test), with its
  parts (`AlertGroup`, `GroupAlert`, `RecentChange`): Beacon's domain event, which monitors, routing and the
  delivery worker make and store;
- the `Message` an adapter renders, the `DeliveryResult` a send returns (whether a failure is worth retrying), and
  the `TemplateFailure` a template that fails raises;
- the `AdapterContext` of one send: the `AdapterSettings` adapters read (the public URL, the SMTP relay, the
  incident services' URLs: nothing else of the server's settings), the HTTP `Sender`, the message's id, the
  notifier's signing secrets and name.

The `Adapter` base class, which renders through Beacon's templates, is adapters/base.py's.

The `Event` below is the one context every message is rendered from. Monitors fill it (kind, state, value,
threshold, query, time range, group, link, …); a routed group notification fills `alert_group` (its alerts,
firing first) and a readable `monitor_name`/`description` too, so an adapter that knows nothing of groups still
says something sensible; both carry `changes`, what changed before (related annotations, see `RecentChange`);
`POST /v1/notifiers/{id}/test` sends the defaults (`kind="test"`); `POST /v1/notifiers/{id}/preview` accepts any
subset of its fields.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

import msgspec

from adapters.redaction import MASK

# A config value that must never be shown: encrypted at rest, masked in reprs, never echoed by the API.
Secret = Annotated[str, msgspec.Meta(extra={"secret": True})]


class ConfigError(Exception):
    """A config that does not fit the adapter; `key` is the config key at fault ("" for the whole config)."""

    def __init__(self, key: str, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.key = key
        self.message = message
        self.missing = missing

    @property
    def param(self) -> str:
        return f"config.{self.key}" if self.key else "config"


def _is_secret(t: msgspec.inspect.Type) -> bool:
    if isinstance(t, msgspec.inspect.UnionType):
        return any(_is_secret(member) for member in t.types)
    return isinstance(t, msgspec.inspect.Metadata) and bool((t.extra or {}).get("secret"))


_SECRET_FIELDS: dict[type, frozenset[str]] = {}


class AdapterConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Base of every adapter's `Config`: unknown keys are refused, secret fields are masked in reprs."""

    @classmethod
    def secret_fields(cls) -> frozenset[str]:
        # Asked on every send (to mask what leaves it); a class's fields never change, so inspect it once.
        found = _SECRET_FIELDS.get(cls)
        if found is None:
            info = msgspec.inspect.type_info(cls)
            assert isinstance(info, msgspec.inspect.StructType)
            found = _SECRET_FIELDS[cls] = frozenset(f.name for f in info.fields if _is_secret(f.type))
        return found

    def __repr__(self) -> str:
        secret = self.secret_fields()
        shown = ", ".join(
            f"{name}={MASK if name in secret and getattr(self, name) is not None else repr(getattr(self, name))}"
            for name in self.__struct_fields__
        )
        return f"{type(self).__name__}({shown})"

    __str__ = __repr__

    def to_dict(self) -> dict[str, Any]:
        """The config as plain JSON-ready data (for encrypted storage only: it holds the secrets)."""
        return {k: v for k, v in msgspec.to_builtins(self).items() if v is not None}


EventKind = Literal["triggered", "resolved", "matched", "no_data", "error", "test"]
MonitorState = Literal["ok", "alerting", "no_data", "error"]


class GroupAlert(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One alert of a group notification."""

    fingerprint: str
    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    starts_at: str
    ends_at: str | None = None
    generator_url: str | None = None


class AlertGroup(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A routed group notification (app/routing): one message per (group, notifier).

    key                 the group key (route + group_by values); incident adapters derive their dedup key from it
    reason              first | new_alerts | resolved | repeat
    status              firing while any alert fires, resolved when all have
    labels              the group's `group_by` labels
    common_labels       labels every alert of the group shares; `common_annotations` likewise
    alerts              firing first, then resolved
    """

    key: str
    reason: Literal["first", "new_alerts", "resolved", "repeat"]
    status: Literal["firing", "resolved"]
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    common_labels: dict[str, str] = msgspec.field(default_factory=dict)
    common_annotations: dict[str, str] = msgspec.field(default_factory=dict)
    alerts: list[GroupAlert] = msgspec.field(default_factory=list)

    def firing(self) -> list[GroupAlert]:
        return [a for a in self.alerts if a.status == "firing"]

    def resolved(self) -> list[GroupAlert]:
        return [a for a in self.alerts if a.status == "resolved"]


class RecentChange(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An annotation related to the alerts of a message (app/annotations/changes.py): a deploy, a config change, …

    type, title, labels   what it is (`labels` may be empty)
    datasets              the datasets it is drawn on; ["*"] for an environment-wide one
    time, end_time        when (RFC 3339, UTC); `end_time` for a span, else None
    url                   its link, if any
    when                  when, in words: "4 min before the first alert"
    why                   why it relates: "dataset web", "service=checkout", or both ("… and …")
    """

    id: str
    type: str
    title: str
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    datasets: list[str] = msgspec.field(default_factory=list)
    time: str
    end_time: str | None = None
    url: str | None = None
    when: str = ""
    why: str = ""


class Event(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What happened: the context every message is rendered from (templates see it as `event`).

    kind               triggered | resolved | matched | no_data | error | test
    monitor_id         the monitor's id (`mon_…`); None for a test message
    monitor_event_id   the monitor event (`mev_…`) this message reports; None for a test message
    monitor_name       shown as the title
    description        the monitor's description, if any
    state              the monitor's state after the change: ok | alerting | no_data | error
    value              the value the evaluation produced (threshold monitors), if any
    threshold          the threshold it was compared with, and `operator` (above, above_or_equal, below, below_or_equal)
    query              the monitor's query text
    start_time         the evaluated time range (RFC 3339, UTC)
    end_time
    group              the group's field values when the monitor notifies by group ({} otherwise)
    matches            sample matching events (match_event monitors), at most 10
    match_count        how many events matched in all (match_event monitors; may exceed len(matches))
    error              the evaluation error (kind error)
    link               where to look (the monitor in Beacon); None when there is no page for it
    time               when it happened (RFC 3339, UTC)
    alert_group        a routed group notification (see AlertGroup); None for a monitor's own message
    changes            what changed before it: related annotations, newest first, at most 5 (RecentChange)
    more_changes       how many more related annotations there are beyond those listed
    """

    kind: EventKind = "test"
    monitor_id: str | None = None
    monitor_event_id: str | None = None
    monitor_name: str = "Beacon test notification"
    description: str | None = None
    state: MonitorState = "ok"
    value: float | None = None
    threshold: float | None = None
    operator: str | None = None
    query: str = ""
    start_time: str | None = None
    end_time: str | None = None
    group: dict[str, Any] = msgspec.field(default_factory=dict)
    matches: list[dict[str, Any]] = msgspec.field(default_factory=list)
    match_count: int | None = None
    error: str | None = None
    link: str | None = None
    time: str = ""
    alert_group: AlertGroup | None = None
    changes: list[RecentChange] = msgspec.field(default_factory=list)
    more_changes: int = 0

    def incident_key(self) -> str:
        """sha256(monitor id + group): one incident per monitor and group, so a resolve closes its trigger; for a
        routed group, sha256 of the group key, so the group's resolve closes what its first message opened."""
        if self.alert_group is not None:
            return hashlib.sha256(f"alert_group:{self.alert_group.key}".encode()).hexdigest()
        group = msgspec.json.encode(dict(sorted(self.group.items()))).decode() if self.group else ""
        basis = f"{self.monitor_id}{group}" if self.monitor_id else f"test:{self.monitor_event_id or self.time}"
        return hashlib.sha256(basis.encode()).hexdigest()

    @property
    def webhook_type(self) -> str:
        if self.alert_group is not None:
            return f"alerts.{self.alert_group.status}"
        return {"test": "notifier.test", "resolved": "monitor.resolved", "matched": "monitor.matched"}.get(
            self.kind, "monitor.triggered"
        )


class Message(msgspec.Struct, kw_only=True):
    """What `render` produces and `send` transmits; the preview endpoint shows it (secrets masked).

    `payload` is the JSON body of an HTTP adapter (for e-mail: subject, text, html, to); `action` and `meta`
    let an adapter route within its destination (e.g. incident_b's "close" of alert `meta["alias"]`);
    `headers` are extra, non-secret request headers.
    """

    payload: dict[str, Any]
    action: str = "send"
    meta: dict[str, str] = msgspec.field(default_factory=dict)
    headers: dict[str, str] = msgspec.field(default_factory=dict)


class DeliveryResult(msgspec.Struct, kw_only=True, frozen=True):
    """The outcome of one send. `retryable` says whether trying again later may help; `retry_after` is the
    destination's own wish (seconds), `status` its response code, `detail` a short, secret-free explanation.
    `gone`: the destination says it will never take a message again (a Standard Webhooks receiver's 410 Gone);
    the worker then disables the notifier until a person re-enables it."""

    ok: bool
    retryable: bool = False
    retry_after: float | None = None
    status: int | None = None
    detail: str = ""
    gone: bool = False


class TemplateFailure(Exception):
    """A message template failed: nothing is sent. The message names the template and the line."""

    def __init__(self, template: str, line: int | None, problem: str) -> None:
        where = f"{template} line {line}" if line else template
        super().__init__(f"template {where}: {problem}")
        self.template = template
        self.line = line
        self.problem = problem


@dataclass(frozen=True)
class AdapterSettings:
    """The server's settings an adapter may read (`context.settings`), built from its own (app/settings.py:
    `Settings.for_adapters`); the defaults are the server's. Secrets: `smtp_password`, never in a repr."""

    base_url: str = "http://127.0.0.1:8000"  # Beacon's public address (links in messages)
    smtp_host: str | None = None  # the relay e-mail is sent through; None: e-mail is not configured
    smtp_port: int = 587
    smtp_username: str | None = None
    smtp_password: str | None = field(default=None, repr=False)
    smtp_starttls: bool = True
    smtp_from: str = "beacon@localhost"
    incident_a_url: str = "https://events.pagerduty.com"  # the incident services' APIs (tests point them at theirs)
    incident_b_url: str = "https://api.opsgenie.com"


class Sender(Protocol):
    """`context.http`: HTTP for adapters (adapters/http.py's HttpSender). It checks the destination against the
    private-network guard at send time, follows no redirect, classifies the status (2xx sent; 408, 429 and 5xx
    worth retrying, with `Retry-After`; other 4xx final) and masks every part of `secrets` (and the URL) in the
    result's detail."""

    async def post_json(
        self,
        url: str,
        payload: Any,
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> DeliveryResult: ...

    async def post(
        self,
        url: str,
        body: bytes,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> DeliveryResult: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class AdapterContext:
    """What an adapter gets from the service for one send.

    `message_id` is the delivery's id: the same on every retry (webhook-id, e-mail Message-ID), so receivers
    can drop duplicates. `signing_secrets` are the notifier's current secret and those still in their
    rotation overlap (current first). `notifier_name` is the notifier's name (Alertmanager's "receiver").
    """

    settings: AdapterSettings
    http: Sender
    message_id: str
    signing_secrets: tuple[str, ...] = field(default=(), repr=False)
    notifier_name: str = ""

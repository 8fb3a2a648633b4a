"""The adapter contract: one subclass of `Adapter` per destination type (built in, or from a plugin package).

An adapter owns:
- `type` and a typed `Config` (a msgspec Struct whose secret fields are marked `Secret`);
- `validate(raw) -> Config` (shape, then the `check` hook), `target(config)` (secret-free destination name) and
  `destinations(config)` (user-supplied URLs for the private-network guard), all class methods;
- per send, an instance built with its config and an `AdapterContext`:
  `render(event) -> Message` (from the Jinja templates in `templates/<type>/`, nothing sent) and
  `async send(message) -> DeliveryResult(ok, retryable, retry_after, status, detail)`.

Adapters never raise the app's HTTP errors: a bad config is a `ConfigError` naming the key at fault (the
notifier service turns it into a 400 with `param`), a failed send is a `DeliveryResult` that says whether it
is worth retrying (only the delivery worker retries), and a template that fails raises `TemplateFailure`
naming the template and line.

Every `send` a subclass defines (a plugin's too) is wrapped so that its result's `detail` has every part of
every secret of `secret_values()` masked, in any encoding (`adapters.redaction`): a destination that echoes
the request in its error cannot put a webhook URL's path or an integration key into what we store or show.
Every `render` is wrapped likewise so that its payload's texts fit the destination's `text_limits`.

The `Event` below is the one context every message is rendered from. Monitors fill it (kind, state, value,
threshold, query, time range, group, link, …); a routed group notification fills `alert_group` (its alerts,
firing first) and a readable `monitor_name`/`description` too, so an adapter that knows nothing of groups still
says something sensible; both carry `changes`, what changed before (related annotations, see `RecentChange`);
`POST /v1/notifiers/{id}/test` sends the defaults (`kind="test"`); `POST /v1/notifiers/{id}/preview` accepts any
subset of its fields.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Literal, TypeVar

import msgspec

from adapters.limits import fit_texts
from adapters.redaction import MASK, redact

if TYPE_CHECKING:
    from adapters.http import HttpSender
    from adapters.templating import Templates
    from app.settings import Settings

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


C = TypeVar("C", bound=AdapterConfig)

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
class AdapterContext:
    """What an adapter gets from the service for one send.

    `message_id` is the delivery's id: the same on every retry (webhook-id, e-mail Message-ID), so receivers
    can drop duplicates. `signing_secrets` are the notifier's current secret and those still in their
    rotation overlap (current first). `notifier_name` is the notifier's name (Alertmanager's "receiver").
    """

    settings: Settings
    http: HttpSender
    message_id: str
    signing_secrets: tuple[str, ...] = field(default=(), repr=False)
    notifier_name: str = ""


def _config_error(exc: msgspec.ValidationError) -> ConfigError:
    """msgspec's message names the key either as `field` in the text or as a `$.key[...]` path."""
    text = str(exc)
    for marker, missing in (("Object missing required field `", True), ("Object contains unknown field `", False)):
        if text.startswith(marker):
            key = text[len(marker) :].split("`", 1)[0]
            if missing:
                return ConfigError(key, f"`config.{key}` is required for this notifier type.", missing=True)
            return ConfigError(key, f"`config.{key}` is not a setting of this notifier type.")
    detail, _, path = text.partition(" - at `$")
    key = path.rstrip("`").lstrip(".").split("[", 1)[0].split(".", 1)[0]
    return ConfigError(key, f"Invalid `config.{key}`: {detail}." if key else f"Invalid `config`: {detail}.")


class Adapter(Generic[C]):
    """Subclass per destination type; set `type` and `Config`, implement `target` (and `check` for rules
    beyond the Struct's shape)."""

    type: ClassVar[str]
    Config: ClassVar[builtins.type[AdapterConfig]]
    description: ClassVar[str] = ""
    # Whether resolved alerts are sent by default (a notifier's `send_resolved` overrides it); Alertmanager's
    # defaults: on for webhooks, pagers and Discord/Teams, off for Slack and e-mail. A plugin may set its own.
    send_resolved: ClassVar[bool] = True
    # True when the service keeps a signing secret in `Config.signing_secret` (generated, shown once, rotatable).
    has_signing_secret: ClassVar[bool] = False

    # --- configuration -------------------------------------------------------------------------------
    @classmethod
    def validate(cls, raw: Any) -> C:
        """Decode and check a config as a user sent it; raise `ConfigError` naming the key at fault."""
        if not isinstance(raw, Mapping):
            raise ConfigError("", "`config` must be a JSON object.")
        try:
            config: C = msgspec.convert(dict(raw), cls.Config)  # type: ignore[assignment]
        except msgspec.ValidationError as exc:
            raise _config_error(exc) from None
        cls.check(config)
        return config

    @classmethod
    def check(cls, config: C) -> None:
        """Rules beyond the Struct's shape (URL syntax, e-mail syntax, …); raise `ConfigError`."""

    @classmethod
    def target(cls, config: C) -> str:
        """A human-readable, secret-free name of the destination."""
        raise NotImplementedError

    @classmethod
    def destinations(cls, config: C) -> dict[str, str]:
        """User-supplied addresses to check against the private-network guard: config key -> URL."""
        return {}

    @classmethod
    def pacing_key(cls, config: C) -> str | None:
        """Messages with the same key are sent at most one per `min_interval` seconds (across processes)."""
        return None

    min_interval: ClassVar[float] = 0.0
    # The most characters the destination takes at places of the payload (adapters/limits.py: "summary",
    # "payload.summary", "embeds[].title"): `render`'s payload is cut to them, as Apprise's `body_maxlen`.
    text_limits: ClassVar[Mapping[str, int]] = {}
    # Where this type's templates live; None: `templates/<type>/` of the project (a plugin points at its own).
    templates_dir: ClassVar[Path | None] = None

    # --- delivery ------------------------------------------------------------------------------------
    def __init__(self, config: C, context: AdapterContext) -> None:
        self.config = config
        self.context = context

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "send" in cls.__dict__:
            cls.send = _masking(cls.__dict__["send"])  # type: ignore[method-assign,assignment]
        if "render" in cls.__dict__:
            cls.render = _fitting(cls.__dict__["render"])  # type: ignore[method-assign,assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    def secret_values(self) -> list[str]:
        """Every secret this adapter holds: masked wherever text leaves it (errors, previews)."""
        values = [getattr(self.config, name) for name in self.config.secret_fields()]
        return [v for v in [*values, *self.context.signing_secrets] if isinstance(v, str) and v]

    def redact(self, text: str) -> str:
        """`text` with every part of every secret of this adapter masked, in any encoding."""
        return redact(text, self.secret_values())

    @property
    def templates(self) -> Templates:
        from adapters.templating import templates_of

        return templates_of(type(self))

    def template_context(self, event: Event) -> dict[str, Any]:
        from adapters.context import template_context

        return template_context(event, self.context.settings)

    def template_name(self, event: Event, plain: str, grouped: str) -> str:
        """`grouped` for a routed group notification when this adapter's templates have it (a plugin's may not:
        it then renders the group from `monitor_name` and `description` with its usual template)."""
        return grouped if event.alert_group is not None and self.templates.has(grouped) else plain

    def render(self, event: Event) -> Message:
        raise NotImplementedError

    async def send(self, message: Message) -> DeliveryResult:
        raise NotImplementedError


Send = Callable[[Any, Message], Coroutine[Any, Any, DeliveryResult]]
Render = Callable[[Any, Event], Message]


def _fitting(render: Render) -> Render:
    """`render`, with its payload's texts cut to the adapter's `text_limits`."""

    @functools.wraps(render)
    def fitted(self: Adapter[Any], event: Event) -> Message:
        message = render(self, event)
        if self.text_limits:
            fit_texts(message.payload, self.text_limits)
        return message

    return fitted


def _masking(send: Send) -> Send:
    """`send`, with its result's detail masked: the one place every adapter's outcome passes through."""

    @functools.wraps(send)
    async def masked(self: Adapter[Any], message: Message) -> DeliveryResult:
        result = await send(self, message)
        detail = self.redact(result.detail)
        return result if detail == result.detail else msgspec.structs.replace(result, detail=detail)

    return masked

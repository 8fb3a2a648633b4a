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

The data of the contract (Event, Message, DeliveryResult, AdapterConfig, AdapterContext, …) is
adapters/contract.py's, importable without anything else of Beacon; its names are importable from here too,
where plugins have always found them.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

from adapters.context import template_context
from adapters.contract import (
    AdapterConfig,
    AdapterContext,
    AdapterSettings,
    AlertGroup,
    ConfigError,
    DeliveryResult,
    Event,
    EventKind,
    GroupAlert,
    Message,
    MonitorState,
    RecentChange,
    Secret,
    Sender,
    TemplateFailure,
)
from adapters.limits import fit_texts
from adapters.redaction import MASK, redact
from adapters.templating import Templates, templates_of

__all__ = [  # the contract's names, where plugins import them from
    "MASK",
    "Adapter",
    "AdapterConfig",
    "AdapterContext",
    "AdapterSettings",
    "AlertGroup",
    "ConfigError",
    "DeliveryResult",
    "Event",
    "EventKind",
    "GroupAlert",
    "Message",
    "MonitorState",
    "RecentChange",
    "Secret",
    "Sender",
    "TemplateFailure",
]

C = TypeVar("C", bound=AdapterConfig)


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
        return templates_of(type(self))

    def template_context(self, event: Event) -> dict[str, Any]:
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

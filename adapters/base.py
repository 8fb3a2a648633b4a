"""The adapter contract: one subclass of `Adapter` per destination type (built in, or from a plugin package).

An adapter owns its type name, a typed `Config` (a msgspec Struct whose secret fields are marked `Secret`),
the validation of that config, the secret-free `target` shown to users, and (see the delivery part below)
how a message is rendered and sent. Adapters never raise the app's HTTP errors: a bad config is a
`ConfigError` naming the offending key, which the notifier service turns into a 400 with `param`.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Generic, TypeVar

import msgspec

# A config value that must never be shown: encrypted at rest, masked in reprs, never echoed by the API.
Secret = Annotated[str, msgspec.Meta(extra={"secret": True})]

MASK = "**********"


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


class AdapterConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base of every adapter's `Config`: unknown keys are refused, secret fields are masked in reprs."""

    @classmethod
    def secret_fields(cls) -> frozenset[str]:
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        return frozenset(f.name for f in info.fields if _is_secret(f.type))

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

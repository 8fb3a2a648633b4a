"""What an import cannot honour, each named by its path in the YAML with the reason; and a reader of a YAML
mapping that reports every key its caller did not take, so that no field is dropped without a word."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from app.routing.importing.yamltext import join, mapping

UNKNOWN = "not a field Alertmanager knows (Alertmanager refuses such a file); nothing is done with it"
MESSAGE_TEXT = (
    "Beacon writes the message from its own templates (templates/<type>/), so this text or setting of "
    "Alertmanager's message is not used"
)
TEMPLATES = "Beacon does not load Alertmanager's notification templates; its messages come from templates/<type>/"
HTTP_CONFIG = (
    "Beacon makes its own HTTP requests: proxies, TLS client settings, OAuth and credentials of "
    "Alertmanager's http_config are not used (webhooks are signed instead: Standard Webhooks)"
)


class Loss(msgspec.Struct, frozen=True):
    path: str  # where it is in the YAML: receivers[2].slack_configs[0].channel
    reason: str


class Losses:
    """The losses of one import, in the order found, each (path, reason) once."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], Loss] = {}

    def add(self, path: str, reason: str) -> None:
        self._found.setdefault((path, reason), Loss(path, reason))

    def unknown(self, keys: Iterable[str], path: str) -> None:
        for key in keys:
            self.add(join(path, key), UNKNOWN)

    def http_config(self, value: Any, path: str) -> None:
        for key, setting in mapping(value, path).items():
            if not _empty(setting) and not (key == "follow_redirects" and setting is True):
                self.add(join(path, key), HTTP_CONFIG)

    def __iter__(self) -> Any:
        return iter(self._found.values())

    def __len__(self) -> int:
        return len(self._found)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


class Fields:
    """A YAML mapping read key by key: `take` marks a key as handled; `rest` is what nobody took."""

    def __init__(self, value: Any, path: str) -> None:
        self.data = mapping(value, path)
        self.path = path
        self._taken: set[str] = set()

    def take(self, key: str) -> Any:
        self._taken.add(key)
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return not _empty(self.data.get(key))

    def at(self, key: str) -> str:
        return join(self.path, key)

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self._taken}

    def lose(self, losses: Losses, keys: Iterable[str], reason: str, defaults: dict[str, Any] | None = None) -> None:
        """Each key of `keys` that is set (and not to Alertmanager's own default) is a loss for `reason`."""
        for key in keys:
            value = self.take(key)
            if _empty(value) or (defaults is not None and key in defaults and defaults[key] == value):
                continue
            losses.add(self.at(key), reason)

    def finish(self, losses: Losses) -> None:
        """Every key nobody took is a field Alertmanager does not know."""
        losses.unknown(self.rest(), self.path)

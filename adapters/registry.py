"""The adapter registry: the built-in types plus any a plugin package adds through the `beacon.adapters`
entry-point group (`[project.entry-points."beacon.adapters"] my_type = "my_pkg.adapter:MyAdapter"`).

Discovery runs when the app is built (never at import time); a plugin that fails to load, is not an
`Adapter`, or reuses a taken type name is skipped with a warning, so one broken plugin cannot stop the server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import entry_points

from adapters.base import Adapter
from adapters.chat_a import ChatA
from adapters.chat_b import ChatB
from adapters.chat_c import ChatC
from adapters.email import Email
from adapters.incident_a import IncidentA
from adapters.incident_b import IncidentB
from adapters.webhook import Webhook

log = logging.getLogger("beacon.adapters")

ENTRY_POINT_GROUP = "beacon.adapters"
BUILTIN: tuple[type[Adapter], ...] = (ChatA, IncidentA, IncidentB, Webhook, Email, ChatB, ChatC)

AdapterClass = type[Adapter]  # an adapter class, whatever its Config


class AdapterRegistry(Mapping[str, AdapterClass]):
    def __init__(self, adapters: Iterable[AdapterClass]) -> None:
        self._by_type: dict[str, AdapterClass] = {}
        for adapter in adapters:
            self._by_type.setdefault(adapter.type, adapter)

    @classmethod
    def discover(cls) -> AdapterRegistry:
        return cls([*BUILTIN, *_plugins({a.type for a in BUILTIN})])

    def types(self) -> list[str]:
        return list(self._by_type)

    def __getitem__(self, type_: str) -> AdapterClass:
        return self._by_type[type_]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_type)

    def __len__(self) -> int:
        return len(self._by_type)


def _plugins(taken: set[str]) -> list[AdapterClass]:
    found: list[AdapterClass] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            adapter = ep.load()
        except Exception:
            log.exception("adapter plugin %r (%s) failed to load; skipped", ep.name, ep.value)
            continue
        if not (
            isinstance(adapter, type)
            and issubclass(adapter, Adapter)
            and isinstance(getattr(adapter, "type", None), str)
        ):
            log.warning("adapter plugin %r (%s) is not an Adapter subclass with a `type`; skipped", ep.name, ep.value)
            continue
        if adapter.type in taken:
            log.warning("adapter plugin %r wants the type %r, which is already taken; skipped", ep.name, adapter.type)
            continue
        taken.add(adapter.type)
        found.append(adapter)
    return found

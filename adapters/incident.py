"""Shared by the incident-paging adapters: the destination is a settings URL, the config one integration key."""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec

from adapters.base import Adapter
from adapters.checks import key_target
from adapters.contract import AdapterConfig, ConfigError, Secret

IntegrationKey = Annotated[Secret, msgspec.Meta(min_length=1, max_length=256)]


class IncidentConfig(AdapterConfig):
    integration_key: IntegrationKey


K = TypeVar("K", bound=IncidentConfig)


class IncidentAdapter(Adapter[K]):
    @classmethod
    def check(cls, config: K) -> None:
        if any(ch.isspace() or ord(ch) < 32 for ch in config.integration_key):
            raise ConfigError("integration_key", "`config.integration_key` must not contain whitespace.")

    @classmethod
    def target(cls, config: K) -> str:
        return key_target(config.integration_key)

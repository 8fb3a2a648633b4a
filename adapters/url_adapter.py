"""Shared by the adapters whose destination is one user-supplied http(s) URL (chat_a, chat_b, chat_c, webhook)."""

from __future__ import annotations

from typing import TypeVar

from adapters.base import Adapter, AdapterConfig, Secret
from adapters.checks import check_http_url, url_target


class UrlConfig(AdapterConfig):
    url: Secret  # incoming-webhook URLs carry their credential in the path


U = TypeVar("U", bound=UrlConfig)


class UrlAdapter(Adapter[U]):
    @classmethod
    def check(cls, config: U) -> None:
        check_http_url(config.url, "url")

    @classmethod
    def target(cls, config: U) -> str:
        return url_target(config.url)

    @classmethod
    def destinations(cls, config: U) -> dict[str, str]:
        return {"url": config.url}

"""Shared by the adapters whose destination is one user-supplied http(s) URL (chat_a, chat_b, chat_c, webhook)."""

from __future__ import annotations

import hashlib
from typing import ClassVar, TypeVar

from adapters.base import Adapter
from adapters.checks import check_http_url, url_target
from adapters.contract import AdapterConfig, DeliveryResult, Event, Message, Secret


class UrlConfig(AdapterConfig):
    url: Secret  # incoming-webhook URLs carry their credential in the path


U = TypeVar("U", bound=UrlConfig)


class UrlAdapter(Adapter[U]):
    template: ClassVar[str] = "message.json.j2"
    group_template: ClassVar[str] = "group.json.j2"  # a routed group notification (event.alert_group)
    query_params: ClassVar[dict[str, str]] = {}

    @classmethod
    def check(cls, config: U) -> None:
        check_http_url(config.url, "url")

    @classmethod
    def target(cls, config: U) -> str:
        return url_target(config.url)

    @classmethod
    def destinations(cls, config: U) -> dict[str, str]:
        return {"url": config.url}

    @classmethod
    def pacing_key(cls, config: U) -> str | None:
        # A hash: the URL is a secret and the key is stored in plain text.
        return f"{cls.type}:" + hashlib.sha256(config.url.encode()).hexdigest() if cls.min_interval else None

    def render(self, event: Event) -> Message:
        name = self.template_name(event, self.template, self.group_template)
        return Message(payload=self.templates.json(name, **self.template_context(event)))

    async def send(self, message: Message) -> DeliveryResult:
        return await self.context.http.post_json(
            self.config.url,
            message.payload,
            headers=message.headers,
            params=self.query_params or None,
            secrets=self.secret_values(),
        )

"""`chat_a`: Chat service A (Slack-style incoming webhook)."""

from __future__ import annotations

from adapters.url_adapter import UrlAdapter, UrlConfig


class ChatAConfig(UrlConfig):
    pass


class ChatA(UrlAdapter[ChatAConfig]):
    type = "chat_a"
    send_resolved = False  # Alertmanager's default for Slack and e-mail
    Config = ChatAConfig
    description = "Chat service A (Slack-style incoming webhook)"
    min_interval = 1.0  # the service accepts about one message per second per webhook URL

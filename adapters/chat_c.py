"""`chat_c`: Chat service C (Teams Workflows-style webhook)."""

from __future__ import annotations

from adapters.url_adapter import UrlAdapter, UrlConfig


class ChatCConfig(UrlConfig):
    pass


class ChatC(UrlAdapter[ChatCConfig]):
    type = "chat_c"
    Config = ChatCConfig
    description = "Chat service C (Teams Workflows-style webhook)"

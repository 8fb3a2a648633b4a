"""`chat_b`: Chat service B (Discord-style webhook)."""

from __future__ import annotations

from adapters.url_adapter import UrlAdapter, UrlConfig


class ChatBConfig(UrlConfig):
    pass


class ChatB(UrlAdapter[ChatBConfig]):
    type = "chat_b"
    Config = ChatBConfig
    description = "Chat service B (Discord-style webhook)"

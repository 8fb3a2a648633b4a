"""`chat_b`: Chat service B (Discord-style webhook)."""

from __future__ import annotations

from typing import Any

from adapters.contract import Event, Message
from adapters.limits import truncate_chars
from adapters.url_adapter import UrlAdapter, UrlConfig

# Discord's documented limits; a message over any of them is refused with a 400. The texts' own are the class's
# `text_limits`; these two hold for an embed as a whole.
MAX_FIELDS = 25
MAX_EMBED_TOTAL = 6000


class ChatBConfig(UrlConfig):
    pass


class ChatB(UrlAdapter[ChatBConfig]):
    type = "chat_b"
    Config = ChatBConfig
    description = "Chat service B (Discord-style webhook)"
    query_params = {"wait": "true"}  # answer with the created message (and a real status) instead of 204
    text_limits = {
        "content": 2000,
        "embeds[].title": 256,
        "embeds[].description": 4096,
        "embeds[].fields[].name": 256,
        "embeds[].fields[].value": 1024,
        "embeds[].footer.text": 2048,
    }

    def render(self, event: Event) -> Message:
        message = super().render(event)  # its texts already cut to `text_limits`
        for embed in message.payload.get("embeds") or []:
            fit_embed(embed)
        return message


def fit_embed(embed: dict[str, Any]) -> None:
    """At most 25 fields, and all texts of the embed together within 6,000: drop fields from the end, then
    shorten the description."""
    embed["fields"] = (embed.get("fields") or [])[:MAX_FIELDS]
    while _embed_total(embed) > MAX_EMBED_TOTAL and embed["fields"]:
        embed["fields"].pop()
    excess = _embed_total(embed) - MAX_EMBED_TOTAL
    if excess > 0 and isinstance(embed.get("description"), str):
        embed["description"] = truncate_chars(embed["description"], max(len(embed["description"]) - excess, 1))


def _embed_total(embed: dict[str, Any]) -> int:
    texts = [embed.get("title") or "", embed.get("description") or "", (embed.get("footer") or {}).get("text", "")]
    texts += [f.get("name", "") + f.get("value", "") for f in embed.get("fields") or []]
    return sum(len(t) for t in texts)

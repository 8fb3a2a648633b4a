"""`chat_b`: Chat service B (Discord-style webhook)."""

from __future__ import annotations

from typing import Any

from adapters.base import Event, Message
from adapters.templating import truncate_chars
from adapters.url_adapter import UrlAdapter, UrlConfig

# Discord's documented limits; a message over any of them is refused with a 400.
LIMITS = {"content": 2000, "title": 256, "description": 4096, "field_name": 256, "field_value": 1024, "footer": 2048}
MAX_FIELDS = 25
MAX_EMBED_TOTAL = 6000


class ChatBConfig(UrlConfig):
    pass


class ChatB(UrlAdapter[ChatBConfig]):
    type = "chat_b"
    Config = ChatBConfig
    description = "Chat service B (Discord-style webhook)"
    query_params = {"wait": "true"}  # answer with the created message (and a real status) instead of 204

    def render(self, event: Event) -> Message:
        message = super().render(event)
        return Message(payload=enforce_limits(message.payload), headers=message.headers)


def enforce_limits(payload: dict[str, Any]) -> dict[str, Any]:
    """Truncate whatever a template produced to Discord's limits, so an over-long title cannot fail a send."""
    if isinstance(payload.get("content"), str):
        payload["content"] = truncate_chars(payload["content"], LIMITS["content"])
    for embed in payload.get("embeds") or []:
        for key in ("title", "description"):
            if isinstance(embed.get(key), str):
                embed[key] = truncate_chars(embed[key], LIMITS[key])
        fields = (embed.get("fields") or [])[:MAX_FIELDS]
        for f in fields:
            f["name"] = truncate_chars(f.get("name", ""), LIMITS["field_name"])
            f["value"] = truncate_chars(f.get("value", ""), LIMITS["field_value"])
        embed["fields"] = fields
        if isinstance(embed.get("footer"), dict):
            embed["footer"]["text"] = truncate_chars(embed["footer"].get("text", ""), LIMITS["footer"])
        # All texts of an embed together must stay within 6,000: drop fields from the end, then shorten the description.
        while _embed_total(embed) > MAX_EMBED_TOTAL and embed["fields"]:
            embed["fields"].pop()
        excess = _embed_total(embed) - MAX_EMBED_TOTAL
        if excess > 0 and isinstance(embed.get("description"), str):
            embed["description"] = truncate_chars(embed["description"], max(len(embed["description"]) - excess, 1))
    return payload


def _embed_total(embed: dict[str, Any]) -> int:
    texts = [embed.get("title") or "", embed.get("description") or "", (embed.get("footer") or {}).get("text", "")]
    texts += [f["name"] + f["value"] for f in embed.get("fields") or []]
    return sum(len(t) for t in texts)

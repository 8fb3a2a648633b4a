"""The notifier type a user most likely meant, for the unknown-type error: `slack` -> `chat_a`.

The built-in types are named by role (chat_a, incident_b, ...), not by the service they speak to, so the names
people know are mapped here; anything else gets the closest type name by spelling.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection

# The services (and close relatives with the same webhook format) each built-in type speaks to. Keys are
# written as `_squash` leaves them.
SERVICES: dict[str, str] = {
    "slack": "chat_a",
    "mattermost": "chat_a",  # Slack-compatible incoming webhooks
    "rocketchat": "chat_a",
    "discord": "chat_b",
    "teams": "chat_c",
    "msteams": "chat_c",
    "microsoftteams": "chat_c",
    "pagerduty": "incident_a",
    "opsgenie": "incident_b",
    "smtp": "email",
    "mail": "email",
    "http": "webhook",
    "https": "webhook",
    "webhooks": "webhook",
    "standardwebhooks": "webhook",
}


def _squash(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def meant_type(name: str, types: Collection[str]) -> str | None:
    """The registered type `name` most likely stands for: a service's name, the same letters written
    otherwise (`chat-a`, `Chat A`), or the closest spelling."""
    squashed = _squash(name)
    mapped = SERVICES.get(squashed)
    if mapped in types:
        return mapped
    for type_ in types:
        if _squash(type_) == squashed:
            return type_
    found = difflib.get_close_matches(name.lower(), list(types), n=1, cutoff=0.6)
    return found[0] if found else None

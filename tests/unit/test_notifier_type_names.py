"""The notifier type a user meant (issue 18): services' names and misspellings to the registered types."""

from __future__ import annotations

import pytest

from app.notifiers.type_names import meant_type

TYPES = ["chat_a", "incident_a", "incident_b", "webhook", "email", "chat_b", "chat_c"]


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("slack", "chat_a"),
        ("Slack", "chat_a"),
        ("mattermost", "chat_a"),
        ("discord", "chat_b"),
        ("MS Teams", "chat_c"),
        ("microsoft-teams", "chat_c"),
        ("pager_duty", "incident_a"),
        ("OpsGenie", "incident_b"),
        ("smtp", "email"),
        ("https", "webhook"),
        ("CHAT-B", "chat_b"),
        ("webhok", "webhook"),
        ("carrier_pigeon", None),
    ],
)
def test_meant_type(given: str, meant: str | None) -> None:
    assert meant_type(given, TYPES) == meant


def test_a_service_whose_type_is_not_registered_is_not_suggested() -> None:
    assert meant_type("slack", ["webhook", "email"]) is None

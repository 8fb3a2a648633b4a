"""Adapter Config classes: typed, secret fields masked in reprs, targets without secrets."""

from __future__ import annotations

import pytest

from adapters.base import ConfigError
from adapters.checks import url_target
from adapters.email import Email
from adapters.incident_a import IncidentA
from adapters.webhook import Webhook, new_signing_secret


def test_secret_fields_are_masked_in_repr_and_str():
    secret = new_signing_secret()
    config = Webhook.validate({"url": "https://h.example.com/very-secret-path", "signing_secret": secret})
    assert Webhook.Config.secret_fields() == {"url", "signing_secret"}
    for shown in (repr(config), str(config), f"{config}", repr([config])):
        assert "very-secret-path" not in shown and secret not in shown
    key = IncidentA.validate({"integration_key": "abcdef123456"})
    assert "abcdef123456" not in repr(key)
    # Non-secret fields stay readable.
    assert "ops@example.com" in repr(Email.validate({"addresses": ["ops@example.com"]}))


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://hooks.example.com/services/T/B/abcdWXYZ", "hooks.example.com/…/WXYZ"),
        ("https://hooks.example.com/services/T/B/abcdWXYZ/", "hooks.example.com/…/WXYZ"),
        ("https://user:pass@hooks.example.com/a/b?sig=secret#frag", "hooks.example.com/…/a/b"),
        ("http://127.0.0.1:8080/x/yz", "127.0.0.1:8080/…/x/yz"),
        ("http://[::1]:9000/hook", "[::1]:9000/…/hook"),
        ("https://HOOKS.example.com", "hooks.example.com"),
    ],
)
def test_url_target(url, target):
    assert url_target(url) == target


def test_config_error_names_the_key():
    with pytest.raises(ConfigError) as info:
        Webhook.validate({"url": "https://h.example.com/x", "extra": 1})
    assert info.value.param == "config.extra" and not info.value.missing
    with pytest.raises(ConfigError) as info:
        Email.validate({})
    assert info.value.param == "config.addresses" and info.value.missing
    with pytest.raises(ConfigError) as info:
        Email.validate(["a@example.com"])
    assert info.value.param == "config"


def test_settings_read_the_notification_variables():
    from app.settings import Settings

    s = Settings.from_env(
        {
            "BEACON_INCIDENT_A_URL": "http://127.0.0.1:9000/",
            "BEACON_INCIDENT_B_URL": "http://127.0.0.1:9001",
            "BEACON_SMTP_HOST": "mail.local",
            "BEACON_SMTP_PORT": "2525",
            "BEACON_SMTP_USERNAME": "u",
            "BEACON_SMTP_PASSWORD": "hunter2",
            "BEACON_SMTP_STARTTLS": "false",
            "BEACON_SMTP_FROM": "alerts@example.com",
            "BEACON_DELIVERY_POLL_SECONDS": "0.5",
            "BEACON_DELIVERY_MAX_ATTEMPTS": "3",
            "BEACON_SECRET_KEY": "sk-very-secret",
        }
    )
    assert s.incident_a_url == "http://127.0.0.1:9000" and s.incident_b_url == "http://127.0.0.1:9001"
    assert (s.smtp_host, s.smtp_port, s.smtp_username, s.smtp_starttls) == ("mail.local", 2525, "u", False)
    assert s.smtp_from == "alerts@example.com" and s.delivery_poll_seconds == 0.5 and s.delivery_max_attempts == 3
    assert "hunter2" not in repr(s) and "sk-very-secret" not in repr(s)
    with pytest.raises(ValueError, match="BEACON_DELIVERY_POLL_SECONDS"):
        Settings.from_env({"BEACON_DELIVERY_POLL_SECONDS": "soon"})

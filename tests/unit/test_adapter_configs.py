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

"""The plugin-author kit run over every built-in adapter (config, rendering, hostile text)."""

from __future__ import annotations

import base64

import pytest

from adapters import testing as kit
from adapters.registry import BUILTIN

VALID = {
    "chat_a": {"url": "https://hooks.example.com/a"},
    "chat_b": {"url": "https://hooks.example.com/b"},
    "chat_c": {"url": "https://hooks.example.com/c"},
    "webhook": {"url": "https://hooks.example.com/w"},
    "incident_a": {"integration_key": "abcd1234"},
    "incident_b": {"integration_key": "abcd1234"},
    "email": {"addresses": ["ops@example.com"]},
}
INVALID = {
    "chat_a": {"url": {"url": "ftp://x"}},
    "chat_b": {"url": {}},
    "chat_c": {"url": {"url": "https://"}},
    "webhook": {"url": {"url": 1}, "signing_secret": {"url": "https://h.example.com", "signing_secret": "raw"}},
    "incident_a": {"integration_key": {"integration_key": ""}},
    "incident_b": {"integration_key": {"integration_key": "a b"}},
    "email": {"addresses": {"addresses": []}},
}


@pytest.mark.parametrize("adapter_cls", BUILTIN, ids=lambda a: a.type)
def test_builtin_adapters_pass_the_kit(adapter_cls):
    kit.check_config(adapter_cls, valid=VALID[adapter_cls.type], invalid=INVALID[adapter_cls.type])
    rendered = kit.check_render(kit.adapter(adapter_cls, VALID[adapter_cls.type]))
    assert set(rendered) == {"triggered", "resolved", "matched", "no_data", "error", "test", "hostile"}


def test_the_kit_catches_a_leaky_config_error():
    from adapters.base import ConfigError
    from adapters.url_adapter import UrlAdapter, UrlConfig

    class Leaky(UrlAdapter[UrlConfig]):
        type = "leaky"
        Config = UrlConfig

        @classmethod
        def check(cls, config):
            if "bad" in config.url:
                raise ConfigError("url", f"`config.url` {config.url} is bad")

    with pytest.raises(AssertionError, match="shows a secret"):
        kit.check_config(
            Leaky, valid={"url": "https://ok.example.com"}, invalid={"url": {"url": "https://bad.example.com/s3cret"}}
        )


@pytest.mark.parametrize(
    "text",
    [
        "Cannot POST /in/S3cretPath",
        "<p>/in/S3cretPath?token=Qv%2FVx&amp;x=1</p>",
        '{"path": "\\/in\\/S3cretPath"}',
        "%2Fin%2FS3cretPath",
        "bad token Qv/Vx",
        "Basic " + base64.b64encode(b"me:pw").decode(),
    ],
)
def test_the_kit_catches_any_part_of_a_secret_in_a_detail(text):
    with pytest.raises(AssertionError, match="a part of a secret shows"):
        kit.assert_no_secret(text, ["https://me:pw@hooks.example.com/in/S3cretPath?token=Qv%2FVx"], "x")
    kit.assert_no_secret("HTTP 404 from hooks.example.com", ["https://me:pw@hooks.example.com/in/S3cretPath"])

"""Adapter plugins: a package that declares a `beacon.adapters` entry point adds a notifier type.

The test package is written to a temporary directory with a `.dist-info` holding its entry points, and that
directory is put on sys.path: exactly what installing a wheel does, without touching the environment.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from adapters.registry import AdapterRegistry
from tests.helpers import assert_error, captured_logs

PLUGIN_SOURCE = """
from adapters.base import Adapter, AdapterConfig, ConfigError, Secret
from adapters.checks import check_http_url, key_target


class PagerLiteConfig(AdapterConfig):
    endpoint: str
    token: Secret


class PagerLite(Adapter[PagerLiteConfig]):
    type = "pager_lite"
    Config = PagerLiteConfig

    @classmethod
    def check(cls, config):
        check_http_url(config.endpoint, "endpoint")
        if not config.token.startswith("pl_"):
            raise ConfigError("token", "`config.token` must start with pl_.")

    @classmethod
    def target(cls, config):
        return "pager-lite " + key_target(config.token)

    @classmethod
    def destinations(cls, config):
        return {"endpoint": config.endpoint}


class NotAnAdapter:
    type = "bogus"


class ClaimsWebhook(PagerLite):
    type = "webhook"
"""

ENTRY_POINTS = """
[beacon.adapters]
pager_lite = beacon_test_plugin:PagerLite
bogus = beacon_test_plugin:NotAnAdapter
webhook = beacon_test_plugin:ClaimsWebhook
broken = beacon_test_plugin_missing:Nothing
"""


@pytest.fixture
def plugin_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    (site / "beacon_test_plugin").mkdir(parents=True)
    (site / "beacon_test_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN_SOURCE))
    dist = site / "beacon_test_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: beacon-test-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))  # also invalidates the import caches
    return site


def test_registry_discovers_the_plugin_and_skips_bad_ones(plugin_on_path):
    with captured_logs() as logs:
        registry = AdapterRegistry.discover()
    assert registry.types() == [
        "chat_a",
        "incident_a",
        "incident_b",
        "webhook",
        "email",
        "chat_b",
        "chat_c",
        "pager_lite",
    ]
    assert registry["webhook"].__module__ == "adapters.webhook"  # a plugin cannot take over a built-in type
    text = "\n".join(logs)
    assert "'bogus'" in text and "not an Adapter" in text
    assert "'webhook'" in text and "already taken" in text
    assert "'broken'" in text and "failed to load" in text


def test_without_the_plugin_the_type_is_unknown():
    assert "pager_lite" not in AdapterRegistry.discover()


async def test_plugin_type_is_accepted_by_the_api(plugin_on_path, app_client, auth):
    async with app_client() as client:
        r = await client.post(
            "/v1/notifiers",
            headers=auth,
            json={
                "name": "lite",
                "type": "pager_lite",
                "config": {"endpoint": "https://public.example/p", "token": "pl_abcd1234"},
            },
        )
        assert r.status_code == 201, r.text
        body = r.json()
        assert body["type"] == "pager_lite" and body["target"] == "pager-lite …1234"
        assert "pl_abcd1234" not in r.text
        # Its own validation, and the private-network guard on the address it declares.
        bad = await client.post(
            "/v1/notifiers",
            headers=auth,
            json={
                "name": "lite",
                "type": "pager_lite",
                "config": {"endpoint": "https://public.example/p", "token": "x"},
            },
        )
        assert_error(bad, 400, "invalid_field", param="config.token")
        private = await client.post(
            "/v1/notifiers",
            headers=auth,
            json={"name": "lite", "type": "pager_lite", "config": {"endpoint": "http://10.0.0.1/p", "token": "pl_1"}},
        )
        assert_error(private, 400, "invalid_field", param="config.endpoint")
        missing = await client.post(
            "/v1/notifiers", headers=auth, json={"name": "lite", "type": "pager_lite", "config": {"token": "pl_1"}}
        )
        assert_error(missing, 400, "missing_field", param="config.endpoint")
        unknown = await client.post("/v1/notifiers", headers=auth, json={"name": "x", "type": "nope", "config": {}})
        assert "pager_lite" in assert_error(unknown, 400, "invalid_field", param="type")["message"]

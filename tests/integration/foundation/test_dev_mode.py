"""Development mode (`beacon serve --dev`, BEACON_DEV): private destinations are allowed, and the server says so
in /healthz and on every console page; without it nothing changes (production stays strict).
`beacon serve --dev` itself, and its banner, run in tests/test_walkthrough.py."""

from __future__ import annotations

from app.settings import Settings
from tests.helpers import assert_error

HOOK = {"name": "local", "type": "webhook", "config": {"url": "http://127.0.0.1:9000/hook"}}


def test_dev_mode_is_read_from_the_environment_and_allows_private_destinations():
    dev = Settings.from_env({"BEACON_DEV": "true"})
    assert dev.dev_mode and dev.allow_private_destinations
    strict = Settings.from_env({})
    assert not strict.dev_mode and not strict.allow_private_destinations
    only_private = Settings.from_env({"BEACON_ALLOW_PRIVATE_DESTINATIONS": "true"})
    assert only_private.allow_private_destinations and not only_private.dev_mode


async def test_dev_mode_allows_a_loopback_webhook_and_says_so(app_client, admin_token):
    auth = {"Authorization": f"Bearer {admin_token}"}
    async with app_client(dev_mode=True, allow_private_destinations=True) as dev:
        assert (await dev.get("/healthz")).json() == {"status": "ok", "mode": "development"}
        created = await dev.post("/v1/notifiers", headers=auth, json=HOOK)
        assert created.status_code == 201, created.text
        signed = await dev.post("/ui/login", data={"token": admin_token}, follow_redirects=True)
        assert 'id="dev-mode"' in signed.text and "Development mode" in signed.text
        assert 'id="dev-mode"' in (await dev.get("/ui/login")).text


async def test_production_stays_strict_and_quiet(client, auth, admin_token):
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    refused = assert_error(await client.post("/v1/notifiers", headers=auth, json=HOOK), 400, "invalid_field")
    assert "beacon serve --dev" in refused["message"]
    signed = await client.post("/ui/login", data={"token": admin_token}, follow_redirects=True)
    assert signed.status_code == 200 and "dev-mode" not in signed.text

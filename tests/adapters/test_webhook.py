"""webhook: Standard Webhooks signatures, verified the way a receiver does (the `standardwebhooks` library)."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook as Receiver
from standardwebhooks.webhooks import WebhookVerificationError

from adapters import testing as kit
from adapters.webhook import Webhook, new_signing_secret
from tests.adapters.conftest import golden


async def test_signed_payload_verifies(httpserver, ctx):
    secret = new_signing_secret()
    httpserver.expect_request("/receiver", method="POST").respond_with_data("", status=204)
    adapter = kit.adapter(Webhook, {"url": httpserver.url_for("/receiver"), "signing_secret": secret}, ctx)
    result = await adapter.send(adapter.render(kit.sample_events()["triggered"]))
    assert result.ok and result.status == 204
    ((request, _),) = httpserver.log
    body = request.get_data()
    headers = dict(request.headers)
    assert request.headers["webhook-id"] == "dlv_0123456789abcdef01234567"
    assert request.headers["Content-Type"] == "application/json"
    payload = Receiver(secret).verify(body, headers)
    assert payload["type"] == "monitor.triggered"
    golden("webhook_triggered", json.loads(body))
    with pytest.raises(WebhookVerificationError):
        Receiver(new_signing_secret()).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Receiver(secret).verify(body.replace(b"12.5", b"99.9"), headers)


async def test_both_secrets_sign_during_a_rotation(httpserver, ctx):
    old, new = new_signing_secret(), new_signing_secret()
    httpserver.expect_request("/r", method="POST").respond_with_data("ok")
    context = kit.context(ctx.settings, message_id="dlv_rot", signing_secrets=(new, old))
    try:
        adapter = kit.adapter(Webhook, {"url": httpserver.url_for("/r"), "signing_secret": new}, context)
        assert (await adapter.send(adapter.render(kit.sample_events()["test"]))).ok
    finally:
        await context.http.aclose()
    ((request, _),) = httpserver.log
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        assert Receiver(secret).verify(request.get_data(), dict(request.headers))["type"] == "notifier.test"


@pytest.mark.parametrize("kind", ["resolved", "matched", "no_data", "error", "test"])
def test_event_types(ctx, kind):
    adapter = kit.adapter(Webhook, {"url": "https://public.example/x", "signing_secret": new_signing_secret()}, ctx)
    expected = {"resolved": "monitor.resolved", "matched": "monitor.matched", "test": "notifier.test"}
    assert adapter.render(kit.sample_events()[kind]).payload["type"] == expected.get(kind, "monitor.triggered")


async def test_hostile_title_still_verifies(httpserver, ctx):
    secret = new_signing_secret()
    httpserver.expect_request("/r", method="POST").respond_with_data("ok")
    adapter = kit.adapter(Webhook, {"url": httpserver.url_for("/r"), "signing_secret": secret}, ctx)
    assert (await adapter.send(adapter.render(kit.hostile_event()))).ok
    request = httpserver.log[0][0]
    data = Receiver(secret).verify(request.get_data(), dict(request.headers))["data"]
    assert data["monitor_name"] == kit.HOSTILE_TEXT and data["group"] == {"service": kit.HOSTILE_TEXT}

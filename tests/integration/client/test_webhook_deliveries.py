"""`verify_webhook` against real deliveries: the app sends a webhook notifier's test message to a local receiver."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from werkzeug import Request, Response

from beacon_client import AsyncClient, BeaconAPIError, WebhookVerificationError, verify_webhook


class Receiver:
    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []

    def __call__(self, request: Request) -> Response:
        self.requests.append((dict(request.headers), request.get_data()))
        return Response("ok")


@pytest.fixture
async def beacon(app_client, admin_token: str) -> AsyncIterator[AsyncClient]:
    """The in-process app, allowed to deliver to the loopback receiver."""
    async with app_client(allow_private_destinations=True) as http:
        yield AsyncClient(str(http.base_url), admin_token, http=http)


async def test_real_deliveries_verify_and_tampering_does_not(beacon: AsyncClient, httpserver):
    receiver = Receiver()
    httpserver.expect_request("/hook", method="POST").respond_with_handler(receiver)
    hook = await beacon.create_notifier("receiver", "webhook", {"url": httpserver.url_for("/hook")})
    assert hook.signing_secret

    delivery = await beacon.test_notifier(hook.id)
    assert delivery.status == "succeeded" and delivery.response_status == 200
    ((headers, body),) = receiver.requests
    payload = verify_webhook(hook.signing_secret, headers, body)
    assert payload["type"] == "notifier.test" and payload == json.loads(body)

    with pytest.raises(WebhookVerificationError):
        verify_webhook(hook.signing_secret, headers, body.replace(b"notifier.test", b"monitor.triggered"))
    with pytest.raises(WebhookVerificationError):
        verify_webhook(hook.signing_secret, headers, body, now=int(headers["Webhook-Timestamp"]) + 301)

    # After a rotation both secrets sign for a while: a receiver on either one accepts the delivery.
    rotated = await beacon.rotate_notifier_secret(hook.id)
    assert rotated.signing_secret and rotated.signing_secret != hook.signing_secret
    await beacon.test_notifier(hook.id)
    headers, body = receiver.requests[1]
    assert len(headers["Webhook-Signature"].split()) == 2
    assert verify_webhook(rotated.signing_secret, headers, body)["type"] == "notifier.test"
    assert verify_webhook(hook.signing_secret, headers, body)["type"] == "notifier.test"

    preview = await beacon.preview_notifier(hook.id)
    assert preview.notifier_id == hook.id and preview.message
    listed = [d.id async for d in beacon.iterate(beacon.list_notifier_deliveries, hook.id)]
    assert delivery.id in listed and len(listed) == 2
    assert (await beacon.get_delivery(delivery.id)).attempt_log[0].ok
    assert [d.id async for d in beacon.iterate(beacon.list_deliveries, notifier_id=hook.id, status="succeeded")]


async def test_a_failed_delivery_can_be_retried(beacon: AsyncClient, httpserver):
    answers = [Response("no", status=400), Response("ok")]
    httpserver.expect_request("/hook", method="POST").respond_with_handler(lambda _r: answers.pop(0))
    hook = await beacon.create_notifier("receiver", "webhook", {"url": httpserver.url_for("/hook")})
    failed = await beacon.test_notifier(hook.id)
    assert (failed.status, failed.response_status, failed.attempts) == ("failed", 400, 1)
    retried = await beacon.retry_delivery(failed.id)
    assert (retried.id, retried.status, retried.response_status, retried.attempts) == (failed.id, "succeeded", 200, 2)
    assert [a.ok for a in retried.attempt_log] == [False, True]
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.retry_delivery(failed.id)
    assert (caught.value.status, caught.value.code) == (409, "conflict")

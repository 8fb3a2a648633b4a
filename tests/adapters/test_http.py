"""The shared HTTP helper: status classification, Retry-After, the guard at send time, pinning, redaction."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from adapters import testing as kit
from adapters.chat_a import ChatA
from adapters.contract import AdapterSettings
from adapters.guard import DestinationGuard
from adapters.http import HttpSender, classify, parse_retry_after, redact_value
from adapters.incident_a import IncidentA
from adapters.incident_b import IncidentB
from adapters.webhook import Webhook, new_signing_secret
from app.deliveries.sending import retry_delay
from tests.adapters.test_guard import EMBEDDED_PRIVATE, NUMERIC_LOOPBACK
from tests.offline_dns import offline_resolve


@pytest.mark.parametrize(
    ("status", "ok", "retryable"),
    [
        (200, True, False),
        (201, True, False),
        (299, True, False),
        (301, False, False),
        (400, False, False),
        (404, False, False),
        (408, False, True),
        (409, False, False),
        (429, False, True),
        (500, False, True),
        (503, False, True),
        (599, False, True),
    ],
)
def test_classify(status, ok, retryable):
    result = classify(status, {})
    assert (result.ok, result.retryable, result.status) == (ok, retryable, status)


def test_retry_after_forms():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("999999") == 3600.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    when = formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (parse_retry_after(when) or 0) <= 31
    assert classify(429, {"retry-after": "12"}).retry_after == 12.0


def test_backoff_is_exponential_with_jitter_and_honours_retry_after():
    lows = [retry_delay(n, None, base=2, cap=600, rand=lambda: 0.0) for n in range(1, 12)]
    highs = [retry_delay(n, None, base=2, cap=600, rand=lambda: 1.0) for n in range(1, 12)]
    assert highs[:6] == [2, 4, 8, 16, 32, 64] and highs[-1] == 600
    assert lows[:3] == [1, 2, 4] and all(lo == hi / 2 for lo, hi in zip(lows, highs, strict=True))
    assert retry_delay(3, 7.0, base=2, cap=600) == 7.0
    assert retry_delay(1, 0.0, base=2, cap=600) == 0.0


@pytest.mark.parametrize(
    ("adapter_cls", "config_for", "settings_for"),
    [
        (ChatA, lambda base: {"url": base + "/services/T/B/secretTOKENzz"}, None),
        (Webhook, lambda base: {"url": base + "/hook/secretPATH", "signing_secret": new_signing_secret()}, None),
        (
            IncidentA,
            lambda base: {"integration_key": "SECRETROUTINGKEY0000"},
            lambda base: kit.settings_with(incident_a_url=base),
        ),
        (
            IncidentB,
            lambda base: {"integration_key": "SECRETGENIEKEY0000"},
            lambda base: kit.settings_with(incident_b_url=base),
        ),
    ],
)
async def test_kit_retry_classification(adapter_cls, config_for, settings_for):
    # The kit's server echoes the request (URL path, body, headers) in error bodies: no secret may come back.
    results = await kit.check_retry_classification(adapter_cls, config_for, settings_for=settings_for)
    assert any("HTTP 500" in r.detail for r in results)
    assert any(r.detail.startswith("network error") for r in results)


async def test_guard_runs_again_at_send_time():
    strict = kit.AdapterContext(
        settings=AdapterSettings(),
        http=HttpSender(DestinationGuard(allow_private=False, resolve=offline_resolve)),
        message_id="dlv_x",
    )
    try:
        async with kit.LocalServer() as server:
            port = server.base_url.rsplit(":", 1)[1]
            # Each form of a private address too (`0177.0.0.1` never gets here: the config check refuses it).
            hosts = [f"[{a}]" for a in EMBEDDED_PRIVATE] + [h for h in NUMERIC_LOOPBACK if h != "0177.0.0.1"]
            urls = [f"http://{host}:{port}/x" for host in hosts]
            for url in (server.base_url + "/x", "http://localhost:9/x", "http://intranet.example/x", *urls):
                adapter = ChatA(ChatA.Config(url=url), strict)
                result = await adapter.send(adapter.render(kit.sample_events()["test"]))
                assert not result.ok and not result.retryable and "refused" in result.detail, (url, result)
            assert server.received == []
    finally:
        await strict.http.aclose()


async def test_connection_is_pinned_to_the_checked_address():
    # The name resolves (in the guard) to 127.0.0.1; the request goes there, with the original Host header.
    async def resolve(host, port):
        return ["127.0.0.1"]

    sender = HttpSender(DestinationGuard(allow_private=True, resolve=resolve))
    try:
        async with kit.LocalServer() as server:
            port = server.base_url.rsplit(":", 1)[1]
            result = await sender.post_json(f"http://receiver.invalid:{port}/p", {"a": 1})
            assert result.ok
            assert server.received[0].headers["host"] == f"receiver.invalid:{port}"
    finally:
        await sender.aclose()


def test_redaction_reaches_nested_values():
    value = {"routing_key": "K3Y", "list": ["a K3Y b", {"x": "K3Y"}], "n": 1}
    assert redact_value(value, ["K3Y"]) == {
        "routing_key": "**********",
        "list": ["a ********** b", {"x": "**********"}],
        "n": 1,
    }

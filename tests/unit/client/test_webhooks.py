"""`verify_webhook` against signatures computed here independently, per the Standard Webhooks text."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

import pytest

from beacon_client import WebhookVerificationError, verify_webhook

KEY = os.urandom(32)
SECRET = "whsec_" + base64.b64encode(KEY).decode()
BODY = b'{"type":"notifier.test","data":{"notifier_id":"ntf_1"}}'
NOW = 1_790_000_000


def signed(msg_id="msg_1", ts=NOW, body=BODY, key=KEY):
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
    }


def test_a_good_signature_returns_the_payload():
    assert verify_webhook(SECRET, signed(), BODY, now=NOW) == {
        "type": "notifier.test",
        "data": {"notifier_id": "ntf_1"},
    }


def test_header_names_are_case_insensitive_and_body_may_be_text():
    headers = {k.title(): v for k, v in signed().items()}
    assert verify_webhook(SECRET, headers, BODY.decode(), now=NOW)["type"] == "notifier.test"


def test_any_of_several_signatures_may_match_during_a_rotation():
    old_key = os.urandom(32)
    headers = signed()
    other = signed(key=old_key)["webhook-signature"]
    headers["webhook-signature"] = f"{other} v2,ignored {headers['webhook-signature']}"
    assert verify_webhook(SECRET, headers, BODY, now=NOW)
    # And the old secret verifies the same header too.
    assert verify_webhook("whsec_" + base64.b64encode(old_key).decode(), headers, BODY, now=NOW)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda h, b: (h, b + b" "),  # body changed
        lambda h, b: ({**h, "webhook-id": "msg_2"}, b),  # id changed
        lambda h, b: ({**h, "webhook-timestamp": str(NOW + 1)}, b),  # timestamp changed
        lambda h, b: ({**h, "webhook-signature": h["webhook-signature"].replace("v1,", "v2,")}, b),
        lambda h, b: ({**h, "webhook-signature": "v1,AAAA"}, b),
    ],
)
def test_tampering_is_refused(tamper):
    headers, body = tamper(signed(), BODY)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(SECRET, headers, body, now=NOW)


def test_wrong_secret_is_refused():
    with pytest.raises(WebhookVerificationError, match="no webhook-signature matches"):
        verify_webhook("whsec_" + base64.b64encode(os.urandom(32)).decode(), signed(), BODY, now=NOW)


@pytest.mark.parametrize("skew", [301, -301, 10_000])
def test_old_or_future_timestamps_are_refused(skew):
    with pytest.raises(WebhookVerificationError, match="tolerance 300"):
        verify_webhook(SECRET, signed(ts=NOW - skew), BODY, now=NOW)


def test_tolerance_is_configurable():
    assert verify_webhook(SECRET, signed(ts=NOW - 3600), BODY, now=NOW, tolerance=4000)


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_missing_headers_are_refused(missing):
    headers = signed()
    del headers[missing]
    with pytest.raises(WebhookVerificationError, match=missing):
        verify_webhook(SECRET, headers, BODY, now=NOW)


def test_a_malformed_secret_is_a_value_error():
    with pytest.raises(ValueError, match="base64"):
        verify_webhook("whsec_not*base64", signed(), BODY, now=NOW)

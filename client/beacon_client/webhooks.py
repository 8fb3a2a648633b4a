"""Verify a Beacon webhook (Standard Webhooks) in a receiver written in Python.

Beacon signs `{webhook-id}.{webhook-timestamp}.{body}` with HMAC-SHA256 under the notifier's secret
(`whsec_` + base64 of the key) and sends `webhook-signature: v1,<base64>`; during a secret rotation the
header holds several space-separated signatures, any one of which may match.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from beacon_client.errors import WebhookVerificationError

SECRET_PREFIX = "whsec_"


def _key(secret: str) -> bytes:
    text = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("the signing secret is not `whsec_` followed by base64") from exc


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `v1,<base64>` signature of one message (what Beacon sends; handy for testing a receiver)."""
    digest = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise WebhookVerificationError(f"missing header {name}")


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance: int = 300,
    now: float | None = None,
) -> Any:
    """Check a delivery's signature and age; returns the decoded JSON payload.

    Raises `WebhookVerificationError` when a header is missing, the timestamp is more than `tolerance`
    seconds away from now (a replay), or no signature matches. Pass the body exactly as received.
    """
    raw = body.encode() if isinstance(body, str) else bytes(body)
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp {stamp!r} is not unix seconds") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError(
            f"webhook-timestamp is {int(current - timestamp)} s away from now (tolerance {tolerance} s)"
        )
    expected = sign(secret, msg_id, timestamp, raw).partition(",")[2]
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected.encode()):
            try:
                return msgspec.json.decode(raw)
            except msgspec.DecodeError as exc:
                raise WebhookVerificationError(f"the signed body is not JSON: {exc}") from exc
    raise WebhookVerificationError("no webhook-signature matches the secret")

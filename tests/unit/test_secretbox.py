from __future__ import annotations

import pytest

from app.secretbox import SealedValueError, SecretBox


def test_round_trip_and_binding():
    box = SecretBox("k1")
    sealed = box.seal(b"hello secret", "notifier:ntf_1")
    assert b"hello secret" not in sealed
    assert box.open(sealed, "notifier:ntf_1") == b"hello secret"
    assert box.seal(b"hello secret", "notifier:ntf_1") != sealed  # a fresh nonce each time
    with pytest.raises(SealedValueError):
        box.open(sealed, "notifier:ntf_2")
    with pytest.raises(SealedValueError):
        SecretBox("k2").open(sealed, "notifier:ntf_1")
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(SealedValueError):
        box.open(tampered, "notifier:ntf_1")
    with pytest.raises(SealedValueError):
        box.open(b"\x02" + sealed[1:], "notifier:ntf_1")
    assert "k1" not in repr(box)

"""Encryption at rest for notifier secrets: AES-256-GCM under a key derived (HKDF-SHA256) from BEACON_SECRET_KEY.

A sealed value is `version byte | 12-byte nonce | ciphertext+tag`. The row it belongs to is bound in as
associated data, so a sealed config copied onto another notifier does not open.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_VERSION = b"\x01"
_NONCE = 12


class SealedValueError(Exception):
    """A sealed value does not open: another secret key, another row, or tampered bytes."""


class SecretBox:
    def __init__(self, secret_key: str) -> None:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"beacon-secretbox", info=b"notifier secrets v1").derive(
            secret_key.encode()
        )
        self._aead = AESGCM(key)

    def __repr__(self) -> str:
        return "SecretBox(key=**********)"

    def seal(self, plaintext: bytes, context: str) -> bytes:
        nonce = os.urandom(_NONCE)
        return _VERSION + nonce + self._aead.encrypt(nonce, plaintext, context.encode())

    def open(self, sealed: bytes, context: str) -> bytes:
        if sealed[:1] != _VERSION or len(sealed) < 1 + _NONCE + 16:
            raise SealedValueError("unknown sealed-value format")
        nonce, body = sealed[1 : 1 + _NONCE], sealed[1 + _NONCE :]
        try:
            return self._aead.decrypt(nonce, body, context.encode())
        except InvalidTag:
            raise SealedValueError("sealed value does not open with this key and context") from None

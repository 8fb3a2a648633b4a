"""The app served over HTTPS on 127.0.0.1, for clients that speak only HTTPS (PagerDuty's refuses any other base
URL) and for our own client's certificate checks: a certificate made for the test (`cert.pem` in the test's
`tmp_path`), trusted by the client through its own SSL context."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from litestar import Litestar

from tests.servers import served_app


def _certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.fixture
async def served_tls(make_app: Callable[..., Litestar], tmp_path: Path) -> AsyncIterator[tuple[str, ssl.SSLContext]]:
    """The app behind uvicorn with TLS: its https:// address, and an SSL context that trusts it."""
    cert, key = _certificate(tmp_path)
    # A client that leaves its connection open is not waited for long.
    options = {"ssl_certfile": str(cert), "ssl_keyfile": str(key), "timeout_graceful_shutdown": 5}
    async with served_app(make_app(), options) as url:
        yield url, ssl.create_default_context(cafile=str(cert))
